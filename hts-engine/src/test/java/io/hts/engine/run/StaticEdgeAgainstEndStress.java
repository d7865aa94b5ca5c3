package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZI_Result;

/**
 * A dynamic task is made to wait for a static task that is succeeding at that moment: the ender
 * changes the state and then looks at the watchers' flag; the adder pushes its edge, sets the flag
 * and then looks at the state. One of them, or both, takes the static task's list of dynamic
 * dependents; the edge is counted exactly once (r2: the hold left), and the dependent stays
 * CREATED (r1).
 */
@JCStressTest
@Outcome(id = "true, 1", expect = ACCEPTABLE, desc = "counted once")
@Outcome(expect = FORBIDDEN, desc = "the static task's end was missed, or counted twice")
@State
public class StaticEdgeAgainstEndStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 1);
    private final DynamicTasks dynamic = DynamicTasks.of(run);
    private final DynamicTask<Integer> dependent = dynamic.newTask("dependent", ctx -> 2, new int[] {0}, 2);

    public StaticEdgeAgainstEndStress() {
        run.deps.tryReady(0);
        run.deps.tryStart(0);
    }

    /** The order of {@code Propagation.succeeded}: the result, the transition, the watchers. */
    @Actor
    public void end() {
        run.storeResult(0, 42);
        run.deps.tryEnd(0, TaskState.SUCCEEDED);
        run.watchers.ended(0);
    }

    @Actor
    public void add() {
        dynamic.dependOnStatic(0, dependent);
    }

    @Arbiter
    public void after(ZI_Result r) {
        r.r1 = dependent.state() == TaskState.CREATED;
        r.r2 = dependent.remaining();
    }
}
