package io.hts.engine.exec.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Per-worker counters, written only by their worker and read by anyone for statistics.
 *
 * <p>Each instance is padded (128 bytes each side, as the JDK's {@code @Contended}: x86 cores
 * prefetch lines in adjacent pairs) to occupy cache lines of its own: counters of different workers
 * written on every task would otherwise share lines and every increment would invalidate the
 * neighbour's cache (false sharing). Writes are plain (single writer); reads from other threads
 * are opaque, so a reader sees a recent value without any fence on the writer's path.
 */
final class WorkerCounters extends WorkerCountersFields {

    private static final VarHandle EXECUTED;
    private static final VarHandle STEALS;
    private static final VarHandle IDLE_SPINS;
    private static final VarHandle PARKS;
    private static final VarHandle BUSY_NANOS;
    private static final VarHandle ACTIVE_SINCE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            Class<?> c = WorkerCountersFields.class;
            EXECUTED = l.findVarHandle(c, "executed", long.class);
            STEALS = l.findVarHandle(c, "steals", long.class);
            IDLE_SPINS = l.findVarHandle(c, "idleSpins", long.class);
            PARKS = l.findVarHandle(c, "parks", long.class);
            BUSY_NANOS = l.findVarHandle(c, "busyNanos", long.class);
            ACTIVE_SINCE = l.findVarHandle(c, "activeSince", long.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    void executed() {
        EXECUTED.setOpaque(this, executed + 1);
    }

    void stole() {
        STEALS.setOpaque(this, steals + 1);
    }

    void idleSpin() {
        IDLE_SPINS.setOpaque(this, idleSpins + 1);
    }

    void parked() {
        PARKS.setOpaque(this, parks + 1);
    }

    /** The worker found work after being idle. */
    void becameActive(long now) {
        ACTIVE_SINCE.setOpaque(this, now);
    }

    /** The worker ran out of work. */
    void becameIdle(long now) {
        long since = activeSince;
        if (since != 0) {
            BUSY_NANOS.setOpaque(this, busyNanos + (now - since));
            ACTIVE_SINCE.setOpaque(this, 0L);
        }
    }

    long executedCount() {
        return (long) EXECUTED.getOpaque(this);
    }

    long stealCount() {
        return (long) STEALS.getOpaque(this);
    }

    long idleSpinCount() {
        return (long) IDLE_SPINS.getOpaque(this);
    }

    long parkCount() {
        return (long) PARKS.getOpaque(this);
    }

    /** Busy time so far, including the current busy period. */
    long busyNanos(long now) {
        long busy = (long) BUSY_NANOS.getOpaque(this);
        long since = (long) ACTIVE_SINCE.getOpaque(this);
        return since == 0 ? busy : busy + Math.max(0, now - since);
    }

    boolean isActive() {
        return (long) ACTIVE_SINCE.getOpaque(this) != 0;
    }
}

/** Padding before the counters. */
abstract class WorkerCountersPadBefore {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p0a, p0b, p0c, p0d, p0e, p0f;
}

/** The counters themselves, followed by padding. */
abstract class WorkerCountersFields extends WorkerCountersPadBefore {
    long executed;
    long steals;
    long idleSpins;
    long parks;
    long busyNanos;
    /** {@code System.nanoTime()} when the current busy period began; 0 while idle. */
    long activeSince;

    long p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p1a, p1b, p1c, p1d, p1e, p1f;
}
