package io.hts.benchmarks;

import static io.hts.benchmarks.workload.ShapeAssertions.assertSameGraph;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.benchmarks.workload.Shape;
import io.hts.benchmarks.workload.ShapeFile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/** The native peer gets exactly the shapes the empty-task benchmarks run. */
class ShapeExportTests {

    @Test
    void exportsEveryEmptyTaskBenchmarkAsItBuildsItsShape(@TempDir Path dir) throws IOException {
        ByteArrayOutputStream manifest = new ByteArrayOutputStream();
        ShapeExport.export(dir, ShapeExport.BENCHMARKS, new PrintStream(manifest, true, StandardCharsets.UTF_8));

        List<String> lines = manifest.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize(4);
        String[] expected = {
            "independent\tio.hts.benchmarks.EmptyIndependentBenchmark\tindependent-1000000\t1000000\t0\t",
            "chain\tio.hts.benchmarks.EmptyChainBenchmark\tchain-1000000\t1000000\t999999\t",
            "tree\tio.hts.benchmarks.EmptyTreeBenchmark\ttree-1048575\t1048575\t1048574\t",
            "dag\tio.hts.benchmarks.EmptyDagBenchmark\tdag-100x50\t5000\t14850\t"
        };
        for (int b = 0; b < 4; b++) {
            Class<? extends EmptyTasksBenchmark> benchmark = ShapeExport.BENCHMARKS.get(b);
            Path file = dir.resolve(ShapeExport.key(benchmark) + ".shape");
            assertThat(lines.get(b)).isEqualTo(expected[b] + file);
            Shape exported = ShapeFile.read(file);
            assertSameGraph(exported, ShapeExport.shapeOf(benchmark));
            assertThat(exported.size())
                    .isEqualTo(benchmark
                            .getAnnotation(OperationsPerInvocation.class)
                            .value());
        }
    }

    @Test
    void theDagIsTheSeededLayeredShape() {
        assertSameGraph(ShapeExport.shapeOf(EmptyDagBenchmark.class), Shape.layered(100, 50, 3, 42));
    }

    @Test
    void knowsEachBenchmarkByItsShortName() {
        assertThat(ShapeExport.BENCHMARKS)
                .extracting(ShapeExport::key)
                .containsExactly("independent", "chain", "tree", "dag");
        assertThat(ShapeExport.benchmark("tree")).isEqualTo(EmptyTreeBenchmark.class);
        assertThat(ShapeExport.benchmark("Tree")).isNull();
    }

    @Test
    void refusesAShapeWhoseSizeIsNotTheDeclaredOperationsPerInvocation() {
        assertThatThrownBy(() -> ShapeExport.checkSize(SevenOperations.class, Shape.chain(8)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("SevenOperations declares 7 operations per invocation but its shape has 8 tasks");
        assertThatThrownBy(() -> ShapeExport.checkSize(String.class, Shape.chain(8)))
                .hasMessageContaining("declares no operations per invocation");
        ShapeExport.checkSize(SevenOperations.class, Shape.chain(7));
    }

    @OperationsPerInvocation(7)
    private static final class SevenOperations {}
}
