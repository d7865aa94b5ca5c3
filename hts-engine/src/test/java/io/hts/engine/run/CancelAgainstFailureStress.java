package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A READY task no device can take fails without starting, while a canceller (a task cancel, or a
 * backend reporting it dropped) cancels it: exactly one ends it (r1 canceller, r2 failure), and
 * the final state (r3) is the winner's.
 */
@JCStressTest
@Outcome(id = "1, 0, 6", expect = ACCEPTABLE, desc = "cancelled")
@Outcome(id = "0, 1, 5", expect = ACCEPTABLE, desc = "failed without starting")
@Outcome(expect = FORBIDDEN, desc = "counted twice, never, or a state neither wrote")
@State
public class CancelAgainstFailureStress {

    private final DependencyManager deps = StressTopologies.readySingle();

    @Actor
    public void cancel(III_Result r) {
        r.r1 = deps.tryCancel(0) ? 1 : 0;
    }

    @Actor
    public void failUnstarted(III_Result r) {
        r.r2 = deps.tryFailUnstarted(0) ? 1 : 0;
    }

    @Arbiter
    public void after(III_Result r) {
        r.r3 = deps.state(0).ordinal();
    }
}
