package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZII_Result;

/**
 * An edge is added to a dynamic task that is succeeding at that moment: the adder pushes it on the
 * dependency's list (r1 true) and the finisher counts it when it takes the list, or the finisher's
 * seal came first and the adder counts it itself (r1 false). Either way the dependent's count
 * (r2: its one dependency and its adder's hold) drops by exactly one, and the run's count (r3)
 * by exactly the finisher's one.
 */
@JCStressTest
@Outcome(id = "true, 1, 2", expect = ACCEPTABLE, desc = "pushed; counted by the finisher")
@Outcome(id = "false, 1, 2", expect = ACCEPTABLE, desc = "sealed first; counted by the adder")
@Outcome(expect = FORBIDDEN, desc = "the edge was counted twice, or never")
@State
public class DynamicEdgeAgainstFinishStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 1);
    private final DynamicTasks dynamic = DynamicTasks.of(run);
    private final DynamicTask<Integer> dependency = dynamic.newTask("dependency", ctx -> 1, new int[0], 1);
    /** One dependency and the hold: never READY here, so nothing reaches the pool. */
    private final DynamicTask<Integer> dependent = dynamic.newTask("dependent", ctx -> 2, new int[0], 2);

    public DynamicEdgeAgainstFinishStress() {
        dependency.dependencyDone(); // its hold: READY
        dependency.tryStart();
    }

    @Actor
    public void finish() {
        dependency.succeeded(42, null);
    }

    @Actor
    public void add(ZII_Result r) {
        r.r1 = dependency.addDependent(dependent);
    }

    @Arbiter
    public void after(ZII_Result r) {
        r.r2 = dependent.state() == TaskState.CREATED ? dependent.remaining() : -1;
        r.r3 = run.state.pending();
    }
}
