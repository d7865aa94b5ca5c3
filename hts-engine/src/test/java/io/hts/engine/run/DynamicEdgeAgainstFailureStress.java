package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import java.io.IOException;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZI_Result;

/**
 * {@link DynamicEdgeAgainstFinishStress} for a dependency that fails (a run that goes on after a
 * failure): the dependent is cancelled (r2) by the finisher (it found the edge, r1 true) or by the
 * adder (it found the seal, r1 false), once: the run's count (r3) goes from 3 to 1, the failed
 * task's one and the dependent's one.
 */
@JCStressTest
@Outcome(id = "true, true, 1", expect = ACCEPTABLE, desc = "pushed; cancelled by the finisher")
@Outcome(id = "false, true, 1", expect = ACCEPTABLE, desc = "sealed first; cancelled by the adder")
@Outcome(expect = FORBIDDEN, desc = "not cancelled, or counted twice")
@State
public class DynamicEdgeAgainstFailureStress {

    private final GraphRun run = new GraphRun(
            StressTopologies.Idle.SCHEDULER, StressTopologies.Idle.ONE_TASK, 1, FailureMode.CONTINUE, false);
    private final DynamicTasks dynamic = DynamicTasks.of(run);
    private final DynamicTask<Integer> dependency = dynamic.newTask("dependency", ctx -> 1, new int[0], 1);
    private final DynamicTask<Integer> dependent = dynamic.newTask("dependent", ctx -> 2, new int[0], 2);
    private final IOException failure = new IOException("failed");

    public DynamicEdgeAgainstFailureStress() {
        dependency.dependencyDone();
        dependency.tryStart();
    }

    @Actor
    public void fail() {
        dependency.endRunning(TaskState.FAILED, failure);
    }

    @Actor
    public void add(ZZI_Result r) {
        r.r1 = dependency.addDependent(dependent);
    }

    @Arbiter
    public void after(ZZI_Result r) {
        r.r2 = dependent.state() == TaskState.CANCELLED && dependent.error().getCause() == failure;
        r.r3 = run.state.pending();
    }
}
