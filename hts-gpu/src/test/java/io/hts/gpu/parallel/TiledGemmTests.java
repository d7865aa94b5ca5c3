package io.hts.gpu.parallel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.gpu.blas.Blas;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The tiled host GEMM's graph and its checks (the products themselves are checked on the GPU). */
class TiledGemmTests {

    @Test
    void theGraphIsOneUploadOfBThenOneGpuTaskPerBandOfRows() {
        TaskGraph g = TaskGraph.named("host-gemm");
        int m = 100;
        TaskGroup<Void> bands = TiledGemm.of(Blas.Precision.FP32, m, 30, 20)
                .tiles(7)
                .addTo(
                        g,
                        "gemm",
                        ByteBuffer.allocateDirect(4 * m * 20),
                        ByteBuffer.allocateDirect(4 * 20 * 30),
                        ByteBuffer.allocateDirect(4 * m * 30));
        assertThat(bands.size()).isEqualTo(7);
        GraphTopology c = g.compile();
        assertThat(c.size()).isEqualTo(8);
        assertThat(c.rootCount()).as("only B's upload starts at once").isOne();
        assertThat(c.name(c.root(0))).isEqualTo("gemm/upload-B");
        for (int i = 0; i < 7; i++) {
            int slot = g.find("gemm[" + i + "]").orElseThrow().index();
            assertThat(c.inDegree(slot)).isOne();
            assertThat(c.name(c.predecessor(c.predecessorStart(slot)))).isEqualTo("gemm/upload-B");
        }
        assertThat(g.tasks()).allSatisfy(t -> {
            assertThat(t.hasBody(Device.GPU)).isTrue();
            assertThat(t.hasBody(Device.CPU)).isFalse();
        });
    }

    @Test
    void theDefaultIsEightBandsOrOneARowWhenThereAreFewerRows() {
        assertThat(TiledGemm.of(Blas.Precision.BF16, 8192, 8192, 8192).tiles()).isEqualTo(8);
        assertThat(TiledGemm.of(Blas.Precision.BF16, 3, 8, 8).tiles()).isEqualTo(3);
    }

    @Test
    void badShapesAndBuffersAreRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> TiledGemm.of(Blas.Precision.FP32, 4, 0, 4))
                .hasMessage("GEMM dimension n must be at least 1, was 0");
        assertThatThrownBy(() -> TiledGemm.of(Blas.Precision.FP32, 4, 4, 4).tiles(5))
                .hasMessage("a GEMM of 4 rows splits into 1 to 4 bands; asked for 5");
        TiledGemm plan = TiledGemm.of(Blas.Precision.FP16, 4, 4, 4);
        ByteBuffer enough = ByteBuffer.allocateDirect(32);
        TaskGraph g = TaskGraph.named("bad");
        assertThatThrownBy(() -> plan.addTo(g, "gemm", ByteBuffer.allocate(32), enough, enough))
                .hasMessage("matrix A must be in a direct (ideally pinned) buffer; got a heap buffer");
        assertThatThrownBy(() -> plan.addTo(
                        g, "gemm", enough, enough, ByteBuffer.allocateDirect(40).position(10)))
                .hasMessage("matrix C needs 32 bytes from the buffer's position; it has 30");
        assertThat(g.size()).as("nothing added by a refused call").isZero();
    }

    @Test
    void overSeveralGpusEachDeviceUploadsItsBAndRunsItsShareOfBandsPinnedToIt() {
        TaskGraph g = TaskGraph.named("split");
        int m = 1000;
        TaskGroup<Void> bands = TiledGemm.of(Blas.Precision.FP32, m, 30, 20)
                .devices(1, 0)
                .tiles(4)
                .addTo(
                        g,
                        "gemm",
                        ByteBuffer.allocateDirect(4 * m * 20),
                        ByteBuffer.allocateDirect(4 * 20 * 30),
                        ByteBuffer.allocateDirect(4 * m * 30));
        assertThat(bands.size()).isEqualTo(8);
        assertThat(g.find("gemm/upload-B@cuda:1").orElseThrow().gpuOrdinal()).isEqualTo(1);
        assertThat(g.find("gemm/upload-B@cuda:0").orElseThrow().gpuOrdinal()).isZero();
        GraphTopology c = g.compile();
        for (int i = 0; i < 8; i++) {
            var band = bands.get(i);
            int device = i < 4 ? 1 : 0;
            assertThat(band.gpuOrdinal()).as("band %d", i).isEqualTo(device);
            assertThat(c.name(c.predecessor(c.predecessorStart(band.index()))))
                    .isEqualTo("gemm/upload-B@cuda:" + device);
        }
    }

    /** Every row is in exactly one band, for shares and band counts that do and do not divide. */
    @ParameterizedTest(name = "{0} rows")
    @ValueSource(ints = {1, 7, 100, 8192, 8191})
    void bandsCoverEveryRowOnceInOrder(int m) {
        for (int parts = 1; parts <= Math.min(4, m); parts++) {
            for (int tiles = 1; tiles <= Math.min(9, m / parts); tiles++) {
                int next = 0;
                for (int i = 0; i < parts * tiles; i++) {
                    int[] span = TiledGemm.band(m, parts, tiles, i);
                    if (span[1] > 0) {
                        assertThat(span[0])
                                .as("m=%d parts=%d tiles=%d band %d", m, parts, tiles, i)
                                .isEqualTo(next);
                        next += span[1];
                    }
                }
                assertThat(next).as("m=%d parts=%d tiles=%d", m, parts, tiles).isEqualTo(m);
            }
        }
    }

    @Test
    void devicesMustBeDistinctAndBandsPerGpuWithinTheRows() {
        assertThatThrownBy(() -> TiledGemm.of(Blas.Precision.FP32, 8, 8, 8).devices(0, 0))
                .hasMessageContaining("distinct CUDA ordinals");
        assertThatThrownBy(() ->
                        TiledGemm.of(Blas.Precision.FP32, 8, 8, 8).devices(0, 1).tiles(5))
                .hasMessage("a GEMM of 8 rows over 2 GPUs splits into 1 to 4 bands per GPU; asked for 5");
    }
}
