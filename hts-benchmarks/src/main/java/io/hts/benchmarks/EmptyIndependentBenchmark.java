package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/** Empty-task overhead, ns per task: 1,000,000 independent tasks. */
@OperationsPerInvocation(1_000_000)
public class EmptyIndependentBenchmark extends EmptyTasksBenchmark {

    @Override
    protected Shape shape() {
        return Shape.independent(1_000_000);
    }
}
