package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.memory.DeviceBuffer;
import io.hts.gpu.support.SimulatedCuda;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No task observes a predecessor's result before that predecessor completed, unless the result is
 * device-resident and the successor's work is ordered after the predecessor's on the device. Every
 * kind of result a GPU body can return, read by a GPU-only successor, on a simulated device whose
 * work runs only when the test says so.
 */
class GpuResultVisibilityTests {

    private static final long MIB = 1L << 20;
    private static final int N = 16;

    private final SimulatedCuda cuda = new SimulatedCuda(256 * MIB);

    /** What a GPU-only producer returns; each holds the value 3 once the producer completed. */
    enum ResultKind {
        /** {@code c.download(buffer, new float[n])}: the array is filled by a completion action. */
        HOST_ARRAY,
        /** {@code c.download(buffer, direct)}: the copy lands when the device work ends. */
        DIRECT_BUFFER,
        /** A host object the body's own completion action fills ({@code onDeviceDone}). */
        FILLED_AT_COMPLETION,
        /** A plain immutable value. */
        PLAIN_VALUE,
        /** A device buffer: the successor may follow it on the device, before it completed. */
        DEVICE_BUFFER,
        /** No result (work on device memory the tasks share): followed on the device too. */
        NONE
    }

    private GpuBackend backend() {
        return cuda.backend(4);
    }

    /** Where a producer of {@link ResultKind#NONE} leaves its buffer for the consumer. */
    private final AtomicReference<DeviceBuffer> shared = new AtomicReference<>();

    private Object produce(GpuContext c, ResultKind kind) {
        DeviceBuffer filled =
                kind == ResultKind.DEVICE_BUFFER || kind == ResultKind.NONE ? c.allocate(4 * N) : c.scratch(4 * N);
        c.kernels().fill(N, 3f, filled);
        return switch (kind) {
            case HOST_ARRAY -> c.download(filled, new float[N]);
            case DIRECT_BUFFER -> {
                ByteBuffer direct = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
                c.download(filled, direct);
                yield direct;
            }
            case FILLED_AT_COMPLETION -> {
                float[] holder = new float[N];
                c.onDeviceDone(() -> java.util.Arrays.fill(holder, 3f));
                yield holder;
            }
            case PLAIN_VALUE -> 3f;
            case DEVICE_BUFFER -> filled;
            case NONE -> {
                shared.set(filled);
                yield null;
            }
        };
    }

    /** The value a successor's body sees in the producer's result, at the moment the body runs. */
    private static float observe(GpuContext c, Object input) {
        if (input instanceof float[] a) {
            return a[N - 1];
        }
        if (input instanceof ByteBuffer b) {
            return b.getFloat(4 * (N - 1));
        }
        if (input instanceof Float f) {
            return f;
        }
        return Float.NaN; // a device buffer: read on the device, below
    }

    @ParameterizedTest
    @EnumSource(ResultKind.class)
    void aGpuSuccessorSeesItsPredecessorsResultOnlyAsItIsWhenThePredecessorCompleted(ResultKind kind) throws Exception {
        cuda.autoRun(false);
        GpuBackend gpu = backend();
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            TaskGraph g = TaskGraph.named("visibility-" + kind);
            Task<Object> producer = g.task("produce").gpu(ctx -> produce(ctx.unwrap(GpuContext.class), kind));
            AtomicReference<Float> seenByBody = new AtomicReference<>();
            Task<float[]> consumer = g.task("consume").after(producer).gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                Object input = kind == ResultKind.NONE ? shared.get() : ctx.input(producer);
                seenByBody.set(observe(c, input));
                DeviceBuffer in = input instanceof DeviceBuffer b ? b : c.upload(new float[] {observe(c, input)});
                if (!(input instanceof DeviceBuffer)) {
                    c.release(in);
                }
                float[] out = c.download(in, new float[1]);
                if (kind == ResultKind.NONE) {
                    c.release(in);
                }
                return out;
            });
            GraphRun run;
            try {
                run = s.submit(g);
                await().atMost(Duration.ofSeconds(5)).until(() -> cuda.queuedWork() > 0);
                if (kind == ResultKind.DEVICE_BUFFER || kind == ResultKind.NONE) {
                    // device-resident: the successor is dispatched ahead and waits on the device
                    await().atMost(Duration.ofSeconds(5))
                            .until(() -> gpu.status().running() == 2);
                    assertThat(run.state(producer)).isEqualTo(TaskState.RUNNING);
                } else {
                    // anything else: the successor must not start before the producer completed
                    await().during(Duration.ofMillis(150))
                            .atMost(Duration.ofSeconds(2))
                            .until(() -> run.state(consumer) != TaskState.RUNNING
                                    && gpu.status().running() == 1);
                }
            } finally {
                cuda.autoRun(true);
            }
            run.await(Duration.ofSeconds(10));
            assertThat(run.result(consumer))
                    .as("the value the successor computed with")
                    .containsExactly(3f);
            if (kind != ResultKind.DEVICE_BUFFER && kind != ResultKind.NONE) {
                assertThat(seenByBody.get())
                        .as("the value the successor's body read")
                        .isEqualTo(3f);
            }
            assertThat(run.states().values()).containsOnly(TaskState.SUCCEEDED);
        }
    }
}
