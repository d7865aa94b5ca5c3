package io.hts.engine.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.RunStatus;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The shared step of the random-cancel tests: a cancel from another thread at a random moment, then the run's end. */
final class RandomCancel {

    private RandomCancel() {}

    /**
     * Runs {@code cancel} on {@code cancellers} after {@code spins} spin-waits, waits for {@code run}
     * (which either succeeds or ends CANCELLED), and checks that no task is left pending.
     */
    static void cancelAndAwait(GraphRun run, ExecutorService cancellers, int spins, Runnable cancel) throws Exception {
        Future<?> cancelling = cancellers.submit(() -> {
            for (int k = 0; k < spins; k++) {
                Thread.onSpinWait();
            }
            cancel.run();
        });
        try {
            run.await(Duration.ofSeconds(30));
        } catch (GraphRunException ex) {
            assertThat(ex.status()).isEqualTo(RunStatus.CANCELLED);
        }
        cancelling.get(10, TimeUnit.SECONDS);
        assertThat(run.pendingTasks()).isZero();
    }
}
