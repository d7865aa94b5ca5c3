package io.hts.engine.exec.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * A cancel visits a worker's running bodies while a body leaves its nested wait: the worker moves
 * the body from its suspended frames back into {@code current}, over the nested task it ran last.
 * r1: how many times the visit found the body. It must find it (the body runs on and a cancel
 * that misses it is lost), and exactly once.
 */
@JCStressTest
@Outcome(id = "1", expect = ACCEPTABLE, desc = "the visit found the body once")
@Outcome(id = "0", expect = FORBIDDEN, desc = "the body was in neither place the visit looked")
@Outcome(expect = FORBIDDEN, desc = "the body was visited twice")
@State
public class VisitAgainstExitHelpStress {

    private final RunningFrames f = new RunningFrames();

    public VisitAgainstExitHelpStress() {
        f.worker.setCurrent(f.outer);
        f.worker.enterHelp(f.outer);
        f.worker.setCurrent(f.nested);
    }

    /** What the end of {@code WorkerLoop.helpUntil} does. */
    @Actor
    public void worker() {
        f.worker.exitHelp(f.outer);
    }

    @Actor
    public void visitor(I_Result r) {
        r.r1 = f.visitsFindingOuter();
    }
}
