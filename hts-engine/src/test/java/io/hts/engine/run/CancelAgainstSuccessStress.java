package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A READY task: a canceller races an attempt that starts it and ends it SUCCEEDED. Exactly one
 * wins and ends the task (r1 counts the canceller's ends, r2 the attempt's), and the final state
 * (r3, the ordinal) is the winner's: one final state, counted once.
 */
@JCStressTest
@Outcome(id = "1, 0, 6", expect = ACCEPTABLE, desc = "cancelled before it started")
@Outcome(id = "0, 1, 4", expect = ACCEPTABLE, desc = "started first, then succeeded")
@Outcome(expect = FORBIDDEN, desc = "counted twice, never, or a state neither wrote")
@State
public class CancelAgainstSuccessStress {

    private final DependencyManager deps = StressTopologies.readySingle();

    @Actor
    public void cancel(III_Result r) {
        r.r1 = deps.tryCancel(0) ? 1 : 0;
    }

    @Actor
    public void startAndSucceed(III_Result r) {
        r.r2 = deps.tryStart(0) && deps.tryEnd(0, TaskState.SUCCEEDED) ? 1 : 0;
    }

    @Arbiter
    public void after(III_Result r) {
        r.r3 = deps.state(0).ordinal();
    }
}
