package io.hts.engine.support;

import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/** Waits for a run to end, however it ends, for tests that look at it afterwards. */
public final class Ended {

    private Ended() {}

    /**
     * Awaits {@code run} for at most 30 s, whether it succeeds or not.
     *
     * @return the run, ended
     * @throws AssertionError when it did not end in time (with its diagnosis; the run is then cancelled)
     */
    public static GraphRun run(GraphRun run) {
        failure(run, Duration.ofSeconds(30));
        return run;
    }

    /**
     * Awaits {@code run} for at most {@code max}.
     *
     * @return the GraphRunException it ended with, or {@code null} when it succeeded
     * @throws AssertionError when it did not end in time (with its diagnosis; the run is then cancelled)
     */
    public static @Nullable GraphRunException failure(GraphRun run, Duration max) {
        try {
            run.await(max);
            return null;
        } catch (GraphRunException ex) {
            return ex;
        } catch (TimeoutException ex) {
            String diagnosis = run + " states=" + run.states() + "\n" + run.diagnose();
            int pending = run.pendingTasks();
            run.cancel(); // so that the test's Scheduler.close(), which waits for active runs, returns
            throw new AssertionError(
                    "run did not end within " + max + " (" + pending + " tasks pending): " + diagnosis, ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }
}
