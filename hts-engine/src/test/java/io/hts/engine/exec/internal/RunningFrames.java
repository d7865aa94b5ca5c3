package io.hts.engine.exec.internal;

import org.jspecify.annotations.Nullable;

/** A worker (never started) and two task frames for the jcstress tests of a visit against a body's moves. */
final class RunningFrames {

    /** One pool per JVM whose workers never run these frames; it only owns the test's worker. */
    private static final WorkStealingPool POOL = WorkStealingPool.builder()
            .threads(1)
            .threadNamePrefix("jcstress-frames-")
            .build();

    /** A task that is never run: a frame a visitor may find. */
    static final class Frame extends PoolTask {
        @Override
        protected @Nullable PoolTask execute(Worker worker) {
            return null;
        }
    }

    final Worker worker = new Worker(POOL, 1, "jcstress-frames-visited", null, false);
    /** The body that waits. */
    final Frame outer = new Frame();
    /** The task the worker runs inside that wait. */
    final Frame nested = new Frame();

    /** How many times a visit of the worker's running frames finds the waiting body. */
    int visitsFindingOuter() {
        int[] found = {0};
        worker.forEachRunning(t -> {
            if (t == outer) {
                found[0]++;
            }
        });
        return found[0];
    }
}
