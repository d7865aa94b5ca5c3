package io.hts.benchmarks.baseline;

import io.hts.benchmarks.workload.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntConsumer;

/**
 * Baseline (a): the graph written by hand with {@link CompletableFuture}s on an explicit pool, as
 * a Java user writes it today: {@code runAsync} for roots, {@code thenRunAsync} after one
 * dependency, {@code allOf(...).thenRunAsync} after several, and {@code allOf(sinks).join()}.
 */
public final class CompletableFutureDag {

    private CompletableFutureDag() {}

    /**
     * Runs the shape and waits for it.
     *
     * @param shape the graph
     * @param pool the executor
     * @param body the work of task {@code i}
     */
    public static void run(Shape shape, Executor pool, IntConsumer body) {
        int n = shape.size();
        CompletableFuture<?>[] futures = new CompletableFuture<?>[n];
        List<CompletableFuture<?>> sinks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int node = i;
            Runnable work = () -> body.accept(node);
            int d = shape.predecessorCount(i);
            CompletableFuture<?> f;
            if (d == 0) {
                f = CompletableFuture.runAsync(work, pool);
            } else if (d == 1) {
                f = futures[shape.predecessor(i, 0)].thenRunAsync(work, pool);
            } else {
                CompletableFuture<?>[] preds = new CompletableFuture<?>[d];
                for (int k = 0; k < d; k++) {
                    preds[k] = futures[shape.predecessor(i, k)];
                }
                f = CompletableFuture.allOf(preds).thenRunAsync(work, pool);
            }
            futures[i] = f;
            if (shape.isSink(i)) {
                sinks.add(f);
            }
        }
        CompletableFuture.allOf(sinks.toArray(CompletableFuture<?>[]::new)).join();
    }
}
