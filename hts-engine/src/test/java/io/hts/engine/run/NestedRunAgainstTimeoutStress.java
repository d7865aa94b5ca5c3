package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A body starts waiting for a nested run ({@code ctx.execute}) just as its time limit passes: the
 * body publishes the nested run, then looks at its attempt's outcome (r1: it saw the time-out);
 * the timer claims the time-out, then cancels the nested run it finds. A Dekker pair: at least
 * one side must see the other, so the nested run is always cancelled (r2); a weak read on either
 * side lets both miss, and the body waits for a run nobody cancels.
 */
@JCStressTest
@Outcome(
        id = {"0, 1", "1, 1"},
        expect = ACCEPTABLE,
        desc = "the nested run was cancelled (by the timer, the body, or both)")
@Outcome(
        id = {"0, 0", "1, 0"},
        expect = FORBIDDEN,
        desc = "the nested run of a timed-out attempt runs on")
@State
public class NestedRunAgainstTimeoutStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 1);
    private final GraphRun nested = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 2);
    private final TaskExecution attempt = new TaskExecution(run, 0, 1);

    public NestedRunAgainstTimeoutStress() {
        attempt.started();
    }

    /** The start of {@code Attempts.executeNested}. */
    @Actor
    public void body(II_Result r) {
        r.r1 = attempt.waitFor(nested) ? 1 : 0;
    }

    /** What {@code Attempts} does when the time limit passes (a limiter that does not interrupt). */
    @Actor
    public void timer() {
        if (attempt.claimTimeout()) {
            attempt.cancelNested();
        }
    }

    @Arbiter
    public void after(II_Result r) {
        r.r2 = nested.cancel() ? 0 : 1; // false: an actor cancelled it already
    }
}
