package io.hts.sample.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.hts.engine.graph.Device;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.sample.SmallSample;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Scenario (c) at a small scale on the CPU: the tiled GEMM and the banded AXPY compute what direct loops compute. */
@SmallSample
class OperatorSuiteTests {

    @Autowired
    Scheduler scheduler;

    @Autowired
    OperatorScenario scenario;

    /** Column {@code j} of C = A B by the textbook loops, in double. */
    private static double[] referenceColumn(int n, float[] a, float[] b, int j) {
        double[] c = new double[n];
        for (int k = 0; k < n; k++) {
            double bkj = b[k + j * n];
            for (int i = 0; i < n; i++) {
                c[i] += a[i + k * n] * bkj;
            }
        }
        return c;
    }

    @Test
    void theTiledGemmIsTheTripleLoopWithPartialTilesAndInnerBlocks() {
        for (int[] sizeAndWorkers : new int[][] {{100, 2}, {130, 8}, {520, 1}}) {
            int n = sizeAndWorkers[0];
            int tile = CpuOperators.tileSize(n, sizeAndWorkers[1]);
            int side = CpuOperators.tilesPerSide(n, tile);
            Operands.Matrices m = Operands.Matrices.of(n);
            for (int t = side * side - 1; t >= 0; t--) {
                CpuOperators.gemmTile(n, tile, t, 2, m.a(), m.b(), m.c());
            }
            for (int j = 0; j < n; j += 3) { // every third column: every tile, every row
                double[] expected = referenceColumn(n, m.a(), m.b(), j);
                for (int i = 0; i < n; i++) {
                    assertThat((double) m.c()[i + j * n])
                            .as("n %d C[%d, %d]", n, i, j)
                            .isCloseTo(expected[i], within(1e-4));
                }
            }
        }
        assertThat(CpuOperators.tileSize(100, 2)).isEqualTo(64); // two partial tiles a side
        assertThat(CpuOperators.tileSize(2048, 2)).isEqualTo(512);
        assertThat(CpuOperators.tileSize(256, 8)).isEqualTo(64);
    }

    @Test
    void theBandedAxpyIsTheLoop() {
        Operands.Vectors v = Operands.Vectors.of(1001);
        for (int band = 0; band < 3; band++) {
            CpuOperators.axpyBand(band, 3, 4, 0.5f, v.x(), v.y());
        }
        for (int i = 0; i < 1001; i++) {
            assertThat(v.y()[i]).isCloseTo(v.y0()[i] + 2 * v.x()[i], within(1e-6f));
        }
        assertThat(Operands.checkAxpy("axpy", 0.5f, 4, v.x(), v.y0(), v.y())).isBetween(0.0, 1.0);
    }

    @Test
    void theChecksCatchAWrongEntry() {
        Operands.Matrices m = Operands.Matrices.of(64);
        assertThatThrownBy(() -> Operands.checkGemm("gemm", 64, m.a(), m.b(), m.c())) // C never computed
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("gemm: C[");
        Operands.Vectors v = Operands.Vectors.of(100);
        assertThatThrownBy(() -> Operands.checkAxpy("axpy", 1f, 1, v.x(), v.y0(), v.y())) // y never updated
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("axpy: y[");
    }

    @Test
    void theSuiteMeasuresEverySizeAndPrintsATable() {
        GraphRun run = scheduler.submit(scenario.graph()).await();
        List<String> lines = scenario.results(run);
        String table = String.join("\n", lines);
        assertThat(table)
                .contains("CPU " + CpuOperators.blasName() + " x" + scheduler.parallelism())
                .containsPattern("GEMM +64 +[0-9.,]+ GFLOP/s")
                .containsPattern("GEMM +100 +[0-9.,]+ GFLOP/s")
                .containsPattern("AXPY +10,000 +[0-9.,]+ GB/s")
                .contains("check: 64 sampled entries of each result", ": OK");
        if (scheduler.systemStatus().usable(Device.GPU)) {
            assertThat(run.profile().tasks()).anyMatch(t -> t.device() == Device.GPU);
        } else {
            assertThat(lines.get(0)).contains("GPU (none usable)");
            assertThat(run.graph().find("gpu-axpy")).isEmpty();
        }
    }
}
