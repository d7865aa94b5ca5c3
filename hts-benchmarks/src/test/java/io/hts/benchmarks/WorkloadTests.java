package io.hts.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.benchmarks.baseline.CompletableFutureDag;
import io.hts.benchmarks.baseline.ForkJoinDag;
import io.hts.benchmarks.workload.Shape;
import io.hts.engine.run.Scheduler;
import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The shapes are what the benchmarks say, and every implementation runs every task once, in order. */
class WorkloadTests {

    private static final Shape[] SHAPES = {
        Shape.independent(1000), Shape.chain(1000), Shape.binaryTree(10), Shape.layered(100, 50, 3, 42)
    };

    @Test
    void shapesHaveTheDocumentedSizeDepthAndRoots() {
        assertThat(SHAPES[0].size()).isEqualTo(1000);
        assertThat(SHAPES[0].depth()).isOne();
        assertThat(SHAPES[0].rootCount()).isEqualTo(1000);
        assertThat(SHAPES[1].depth()).isEqualTo(1000);
        assertThat(SHAPES[2].size()).isEqualTo(1023);
        assertThat(SHAPES[2].depth()).isEqualTo(10);
        Shape dag = SHAPES[3];
        assertThat(dag.size()).isEqualTo(5000);
        assertThat(dag.depth()).isEqualTo(100);
        assertThat(dag.rootCount()).isEqualTo(50);
        for (int i = 50; i < dag.size(); i++) {
            assertThat(dag.predecessorCount(i)).isEqualTo(3);
            for (int k = 0; k < 3; k++) {
                assertThat(dag.predecessor(i, k) / 50).isEqualTo(i / 50 - 1);
            }
        }
    }

    /** Each of the shapes, named. */
    static Stream<Named<Shape>> shapes() {
        return Arrays.stream(SHAPES).map(shape -> Named.of(shape.name(), shape));
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void everyImplementationRunsEveryTaskOnceAfterItsDependencies(Shape shape) {
        ForkJoinPool pool = new ForkJoinPool(2);
        try (Scheduler scheduler = Scheduler.builder().threads(2).build()) {
            checked(shape, order -> CompletableFutureDag.run(shape, pool, order));
            checked(shape, order -> ForkJoinDag.run(shape, pool, order));
            checked(shape, order -> scheduler.execute(shape.toGraph(order)));
        } finally {
            pool.shutdown();
        }
    }

    private static void checked(Shape shape, java.util.function.Consumer<java.util.function.IntConsumer> runner) {
        AtomicIntegerArray ran = new AtomicIntegerArray(shape.size());
        runner.accept(i -> {
            for (int k = 0; k < shape.predecessorCount(i); k++) {
                if (ran.get(shape.predecessor(i, k)) != 1) {
                    throw new AssertionError(shape.name() + ": task " + i + " ran before its dependency");
                }
            }
            ran.incrementAndGet(i);
        });
        for (int i = 0; i < shape.size(); i++) {
            assertThat(ran.get(i)).as("%s task %d", shape.name(), i).isOne();
        }
    }
}
