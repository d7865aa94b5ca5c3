package io.hts.sample;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.gpu.exec.GpuContext;
import io.hts.gpu.memory.DeviceBuffer;
import java.util.Arrays;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Scenario 1, a data-preprocessing pipeline: load a column of 4 million readings, normalise it in
 * 16 shards (each on the CPU or the GPU, as the policy decides: the task has both bodies) and merge
 * the shards' statistics into the column's mean.
 */
@Configuration(proxyBeanMethods = false)
public class PreprocessingPipeline {

    static final int ROWS = 4_000_000;
    static final int SHARDS = 16;
    static final float SCALE = 1e-3f;

    /**
     * A shard's statistics: how many values and their sum after scaling. The sum is a one-element
     * array because a GPU body's download fills it when the task completes, not when the body returns.
     *
     * @param count values in the shard
     * @param sumCell the sum, in element 0
     */
    public record ShardStats(int count, float[] sumCell) {

        /** The sum of the shard's scaled values. */
        public double sum() {
            return sumCell[0];
        }
    }

    /** The column's mean over all shards. */
    public record Summary(int count, double mean) {

        static Summary of(List<ShardStats> shards) {
            int n = 0;
            double sum = 0;
            for (ShardStats s : shards) {
                n += s.count();
                sum += s.sum();
            }
            return new Summary(n, sum / n);
        }
    }

    @Bean
    TaskGraph preprocessing() {
        TaskGraph g = TaskGraph.named("preprocessing");
        Task<float[]> load = g.task("load").cpu(ctx -> readings(ROWS));
        TaskGroup<ShardStats> shards = g.group(
                "normalize",
                SHARDS,
                (i, t) -> t.after(load)
                        .bodies(
                                ctx -> onCpu(shard(ctx.input(load), i)),
                                ctx -> onGpu(ctx.unwrap(GpuContext.class), shard(ctx.input(load), i))));
        g.task("merge").after(shards).cpu(ctx -> Summary.of(ctx.inputs(shards)));
        return g;
    }

    /** Synthetic sensor readings, the same on every run: a ramp with a periodic ripple. */
    static float[] readings(int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (i % 1000) + (float) Math.sin(i * 0.001) * 10;
        }
        return v;
    }

    static float[] shard(float[] all, int i) {
        int per = (all.length + SHARDS - 1) / SHARDS;
        return Arrays.copyOfRange(all, i * per, Math.min(all.length, (i + 1) * per));
    }

    static ShardStats onCpu(float[] x) {
        double sum = 0;
        for (float v : x) {
            sum += v * SCALE;
        }
        return new ShardStats(x.length, new float[] {(float) sum});
    }

    /** The same on the device: upload, scale in place, sum, download one float when the task completes. */
    static ShardStats onGpu(GpuContext gpu, float[] x) {
        DeviceBuffer d = gpu.upload(x);
        gpu.kernels().scale(x.length, SCALE, d);
        DeviceBuffer total = gpu.scratch(Float.BYTES);
        gpu.kernels().sum(x.length, d, total);
        gpu.release(d);
        return new ShardStats(x.length, gpu.download(total, new float[1]));
    }
}
