package io.hts.engine.exec.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * A cancel visits a worker's running bodies while a body enters a nested wait: the worker moves
 * the body from {@code current} into its suspended frames and runs a nested task in its place. r1:
 * how many times the visit found the waiting body. It must find it (a cancel that misses it never
 * reaches the run the body waits for), and exactly once.
 */
@JCStressTest
@Outcome(id = "1", expect = ACCEPTABLE, desc = "the visit found the waiting body once")
@Outcome(id = "0", expect = FORBIDDEN, desc = "the body was in neither place the visit looked")
@Outcome(expect = FORBIDDEN, desc = "the body was visited twice")
@State
public class VisitAgainstEnterHelpStress {

    private final RunningFrames f = new RunningFrames();

    public VisitAgainstEnterHelpStress() {
        f.worker.setCurrent(f.outer);
    }

    /** What {@code WorkerLoop.helpUntil} then {@code runTask} do. */
    @Actor
    public void worker() {
        f.worker.enterHelp(f.outer);
        f.worker.setCurrent(f.nested);
    }

    @Actor
    public void visitor(I_Result r) {
        r.r1 = f.visitsFindingOuter();
    }
}
