package io.hts.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.kernel.Kernel;
import io.hts.gpu.kernel.KernelCache;
import io.hts.gpu.support.SimulatedCuda;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A kernel kept across tasks after its module was evicted and unloaded fails at launch, saying why. */
class KernelEvictionTests {

    private static final long MIB = 1L << 20;

    private static final String K = "hts_test_k";

    private final SimulatedCuda cuda =
            new SimulatedCuda(256 * MIB).kernel(K, l -> l.memory(0).putFloat(0, 7f));

    private static String ptx(String tag) {
        return "// " + tag + "\n.visible .entry " + K + "()\n";
    }

    private static float launchInto(GpuContext c, Kernel k) {
        c.launch(
                k,
                Dim3.of(1),
                Dim3.of(1),
                KernelArguments.of().pointer(c.scratch(4).address()));
        return 1f;
    }

    @Test
    void aKernelKeptAcrossTasksFailsClearlyOnceItsModuleWasUnloaded() {
        GpuBackend gpu = cuda.backend(2);
        try (Scheduler s = Scheduler.builder().threads(2).gpuBackend(gpu).build()) {
            AtomicReference<Kernel> kept = new AtomicReference<>();
            TaskGraph first = TaskGraph.named("keep");
            Task<Float> keep = first.task("keep").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                kept.set(c.kernel(ptx("kept"), K));
                return launchInto(c, kept.get());
            });
            assertThat(s.execute(first).result(keep)).isEqualTo(1f);

            // other modules push it out of the device's cache; the device is idle, so it may be unloaded
            for (int i = 0; i < KernelCache.DEFAULT_MAX_MODULES; i++) {
                gpu.kernels().fromPtx(ptx("other" + i), K);
            }
            gpu.kernels().unloadEvicted();
            assertThat(kept.get().isLoaded()).isFalse();

            TaskGraph stale = TaskGraph.named("stale");
            stale.task("stale").gpu(ctx -> launchInto(ctx.unwrap(GpuContext.class), kept.get()));
            assertThatThrownBy(() -> s.execute(stale))
                    .isInstanceOf(GraphRunException.class)
                    .hasRootCauseInstanceOf(IllegalStateException.class)
                    .rootCause()
                    .hasMessageContaining("kernel " + K + " of cuda:0 can no longer be launched")
                    .hasMessageContaining("look kernels up in each task body");

            TaskGraph fresh = TaskGraph.named("fresh");
            Task<Float> lookedUp = fresh.task("fresh").gpu(ctx -> {
                GpuContext c = ctx.unwrap(GpuContext.class);
                return launchInto(c, c.kernel(ptx("kept"), K));
            });
            assertThat(s.execute(fresh).result(lookedUp)).isEqualTo(1f);
        }
    }
}
