package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZI_Result;

/**
 * A task whose only dependency succeeded starts on the worker that ran that dependency, counting
 * it and starting in one step (r1), while a canceller cancels it (r2): exactly one wins, the task
 * ends the race RUNNING or CANCELLED accordingly, and its count is taken down either way (r3: 1
 * RUNNING, 2 CANCELLED, 0 anything else or a count left).
 */
@JCStressTest
@Outcome(
        id = {"true, false, 1", "false, true, 2"},
        expect = ACCEPTABLE,
        desc = "one owner, the count taken down")
@Outcome(expect = FORBIDDEN, desc = "started and cancelled, neither, or a count left")
@State
public class ContinuationStartAgainstCancelStress {

    private final DependencyManager deps = new DependencyManager(StressTopologies.PAIR);

    @Actor
    public void starter(ZZI_Result r) {
        r.r1 = deps.dependencyDoneAndStart(1);
    }

    @Actor
    public void canceller(ZZI_Result r) {
        r.r2 = deps.tryCancel(1);
    }

    @Arbiter
    public void after(ZZI_Result r) {
        if (deps.remaining(1) != 0) {
            r.r3 = 0;
        } else {
            r.r3 = deps.is(1, TaskState.RUNNING) ? 1 : deps.is(1, TaskState.CANCELLED) ? 2 : 0;
        }
    }
}
