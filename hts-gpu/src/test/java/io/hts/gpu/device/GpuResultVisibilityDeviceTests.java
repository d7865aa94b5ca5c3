package io.hts.gpu.device;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.GpuDiscovery;
import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.memory.DeviceBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The documented pattern on a real GPU, for every kind of result a GPU body returns: a GPU-only
 * task's result read by a GPU-only successor that uploads it and computes with it. Before the fix
 * the successor of a downloaded array saw zeros and the run succeeded (20 of 20 runs on the H200).
 */
@RequiresGpu
class GpuResultVisibilityDeviceTests {

    private static final int N = 1 << 20;
    private static final int ROUNDS = 20;

    enum ResultKind {
        HOST_ARRAY,
        DIRECT_BUFFER,
        FILLED_AT_COMPLETION,
        PLAIN_VALUE,
        DEVICE_BUFFER
    }

    private static Object produce(GpuContext c, ResultKind kind) {
        DeviceBuffer filled = kind == ResultKind.DEVICE_BUFFER ? c.allocate(4L * N) : c.scratch(4L * N);
        // enough device work that the host would get ahead of it
        for (int i = 0; i < 8; i++) {
            c.kernels().fill(N, 3f, filled);
        }
        return switch (kind) {
            case HOST_ARRAY -> c.download(filled, new float[N]);
            case DIRECT_BUFFER -> {
                ByteBuffer direct = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
                c.download(filled, direct);
                yield direct;
            }
            case FILLED_AT_COMPLETION -> {
                float[] holder = c.download(filled, new float[N]);
                float[] copy = new float[N];
                c.onDeviceDone(() -> System.arraycopy(holder, 0, copy, 0, N));
                yield copy;
            }
            case PLAIN_VALUE -> 3f;
            case DEVICE_BUFFER -> filled;
        };
    }

    /** The successor uploads what it read (or reads the buffer in place) and doubles it on the device. */
    private static float[] consume(GpuContext c, Object input) {
        DeviceBuffer in;
        if (input instanceof DeviceBuffer b) {
            in = b;
        } else {
            float[] values = new float[N];
            if (input instanceof float[] a) {
                values = a.clone();
            } else if (input instanceof ByteBuffer bb) {
                bb.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().get(values);
            } else {
                Arrays.fill(values, (Float) input);
            }
            in = c.upload(values);
            c.release(in);
        }
        DeviceBuffer doubled = c.scratch(4L * N);
        c.copy(in, doubled, 4L * N);
        c.kernels().scale(N, 2f, doubled);
        return c.download(doubled, new float[N]);
    }

    @ParameterizedTest
    @EnumSource(ResultKind.class)
    void aGpuSuccessorComputesWithItsPredecessorsCompletedResult(ResultKind kind) throws Exception {
        GpuDiscovery.Result found = GpuRequirement.gpu();
        GpuBackend gpu = new GpuBackend(found.api(), found.devices().get(0), GpuSettings.defaults(1L << 30), false);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            for (int round = 0; round < ROUNDS; round++) {
                TaskGraph g = TaskGraph.named("visibility-" + kind);
                Task<Object> producer = g.task("produce").gpu(ctx -> produce(ctx.unwrap(GpuContext.class), kind));
                Task<float[]> consumer = g.task("consume")
                        .after(producer)
                        .gpu(ctx -> consume(ctx.unwrap(GpuContext.class), ctx.input(producer)));
                GraphRun run = s.submit(g).await(Duration.ofSeconds(30));
                float[] out = run.result(consumer);
                assertThat(out[0]).as("round %d, first element", round).isEqualTo(6f);
                assertThat(out[N - 1]).as("round %d, last element", round).isEqualTo(6f);
                assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
            }
        }
    }
}
