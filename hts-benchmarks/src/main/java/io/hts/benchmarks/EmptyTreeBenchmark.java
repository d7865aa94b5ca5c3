package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/** Empty-task overhead, ns per task: a binary tree of 2^20 - 1 tasks (each task makes two children ready). */
@OperationsPerInvocation(1_048_575)
public class EmptyTreeBenchmark extends EmptyTasksBenchmark {

    @Override
    protected Shape shape() {
        return Shape.binaryTree(20);
    }
}
