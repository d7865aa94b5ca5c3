package io.hts.engine.exec.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.locks.LockSupport;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * No lost wake-up: a worker out of work queues itself, rescans and parks while queued; a producer
 * publishes work and signals. The worker must always wake up and see the work.
 */
@JCStressTest(Mode.Termination)
@Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "the worker woke up and saw the work")
@Outcome(id = "STALE", expect = FORBIDDEN, desc = "a lost wake-up: the worker sleeps with work published")
@State
public class IdleParkAgainstSignalStress {

    private final IdleWorkers.Slot slot = new IdleWorkers.Slot(0);
    private final IdleWorkers idle = new IdleWorkers(new IdleWorkers.Slot[] {slot});
    private volatile boolean work;

    @Actor
    public void worker() {
        slot.thread = Thread.currentThread();
        while (true) {
            idle.enqueue(slot);
            if (work) { // the rescan after queueing
                idle.leave(slot);
                return;
            }
            while (idle.isQueued(slot)) {
                LockSupport.park();
            }
            if (work) {
                return;
            }
        }
    }

    @Signal
    public void producer() {
        work = true;
        idle.signal();
    }
}
