package io.hts.engine.support;

import java.time.Duration;

import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;

/** Waits for a run to end, however it ends, for tests that look at it afterwards. */
public final class Ended {

    private Ended() {
    }

    /**
     * Awaits {@code run} for at most 30 s, whether it succeeds or not.
     *
     * @return the run, ended
     * @throws AssertionError when it did not end in time
     */
    public static GraphRun run(GraphRun run) {
        try {
            run.await(Duration.ofSeconds(30));
        }
        catch (GraphRunException expected) {
            // it did not succeed: ended all the same
        }
        catch (Exception ex) {
            throw new AssertionError("run " + run.id() + " did not end within 30 s", ex);
        }
        return run;
    }
}
