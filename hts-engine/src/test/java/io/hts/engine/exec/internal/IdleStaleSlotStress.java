package io.hts.engine.exec.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * A wake-up never lands on a worker that went back to work while another sleeps: workers A and B
 * are queued (B on top); B finds work and leaves while a producer signals. r1: whom the signal
 * woke (1 A, 2 B, 0 nobody); r2: whether B's leaving found it woken by the signal (1) or it left by
 * itself (0); r3: A's state afterwards (0 ACTIVE, 1 QUEUED).
 */
@JCStressTest
@Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "B left by itself (off the top, or passed over as stale); A woken")
@Outcome(id = "2, 1, 1", expect = ACCEPTABLE, desc = "B woken while still waiting; it rescans, A sleeps on")
@Outcome(expect = FORBIDDEN, desc = "the signal was spent on B after it had gone back to work, or lost")
@State
public class IdleStaleSlotStress {

    private final IdleWorkers.Slot a = new IdleWorkers.Slot(0);
    private final IdleWorkers.Slot b = new IdleWorkers.Slot(1);
    private final IdleWorkers idle = new IdleWorkers(new IdleWorkers.Slot[] {a, b});

    public IdleStaleSlotStress() {
        idle.enqueue(a);
        idle.enqueue(b);
    }

    @Actor
    public void bFindsWork(III_Result r) {
        r.r2 = idle.leave(b) ? 1 : 0;
    }

    @Actor
    public void producer(III_Result r) {
        IdleWorkers.Slot woken = idle.signal();
        r.r1 = woken == a ? 1 : woken == b ? 2 : 0;
    }

    @Arbiter
    public void after(III_Result r) {
        r.r3 = a.state();
    }
}
