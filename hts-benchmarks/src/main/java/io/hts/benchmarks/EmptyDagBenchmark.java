package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/** Empty-task overhead, ns per task: the 5,000-task DAG of depth 100 (50 a level, 3 parents each). */
@OperationsPerInvocation(5_000)
public class EmptyDagBenchmark extends EmptyTasksBenchmark {

    @Override
    protected Shape shape() {
        return Shape.layered(100, 50, 3, 42);
    }
}
