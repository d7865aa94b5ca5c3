package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/** Empty-task overhead, ns per task: a 1,000,000-task linear chain. */
@OperationsPerInvocation(1_000_000)
public class EmptyChainBenchmark extends EmptyTasksBenchmark {

    @Override
    protected Shape shape() {
        return Shape.chain(1_000_000);
    }
}
