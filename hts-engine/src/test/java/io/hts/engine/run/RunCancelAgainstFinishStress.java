package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZI_Result;

/**
 * {@code run.cancel()} races the run's finish (its last task has just ended): when cancel returns
 * true (r1) the outcome (r2, the {@code RunStatus} ordinal) is CANCELLED, never SUCCEEDED; when it
 * returns false the run succeeded.
 */
@JCStressTest
@Outcome(id = "true, 3", expect = ACCEPTABLE, desc = "the cancel won: CANCELLED")
@Outcome(id = "false, 1", expect = ACCEPTABLE, desc = "the finish won: SUCCEEDED, and cancel said false")
@Outcome(expect = FORBIDDEN, desc = "cancel said true and the run SUCCEEDED (or the reverse)")
@State
public class RunCancelAgainstFinishStress {

    private final RunState state = new RunState(null, 1);

    @Actor
    public void cancel(ZI_Result r) {
        r.r1 = state.requestCancel();
    }

    @Actor
    public void finish(ZI_Result r) {
        r.r2 = state.claimFinish().ordinal();
    }
}
