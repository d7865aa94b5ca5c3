package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * TaskListener.onRunFinished gets every finished run's final profile once, whatever the profiler
 * keeps and however many runs end at once, before the run's end event; one that throws is
 * isolated.
 */
class RunFinishedListenerTests {

    /** Records the profiles and, for each, whether the run's end event came before it. */
    private static final class Recording implements TaskListener {
        final List<RunProfile> profiles = new CopyOnWriteArrayList<>();
        final List<Long> endEvents = new CopyOnWriteArrayList<>();
        final List<Long> endEventBeforeProfile = new CopyOnWriteArrayList<>();

        @Override
        public void onEvent(TaskEvent event) {
            if (event.type() == EventType.RUN_SUCCEEDED
                    || event.type() == EventType.RUN_FAILED
                    || event.type() == EventType.RUN_CANCELLED) {
                endEvents.add(event.runId());
            }
        }

        @Override
        public void onRunFinished(RunProfile profile) {
            if (endEvents.contains(profile.runId())) {
                endEventBeforeProfile.add(profile.runId());
            }
            profiles.add(profile);
        }

        @Override
        public boolean wantsRoutineEvents() {
            return false;
        }
    }

    @Test
    void everyRunIsHandedOverOnceWithItsFinalProfileWhateverTheProfilerKeeps() throws Exception {
        for (int v = 0; v < 3; v++) {
            int variant = v;
            Recording rec = new Recording();
            TaskListener throwing = new TaskListener() {
                @Override
                public void onEvent(TaskEvent event) {}

                @Override
                public void onRunFinished(RunProfile profile) {
                    throw new IllegalStateException("a listener that throws at every run's end");
                }
            };
            io.hts.engine.run.SchedulerBuilder b =
                    Scheduler.builder().threads(2).listener(throwing).listener(rec);
            b = variant == 0 ? b : variant == 1 ? b.retainedRuns(0) : b.profiling(false);
            ExecutorService callers = Executors.newFixedThreadPool(4);
            try (Scheduler s = b.build()) {
                List<Future<Long>> ids = new CopyOnWriteArrayList<>();
                for (int c = 0; c < 4; c++) {
                    int caller = c;
                    for (int i = 0; i < 50; i++) {
                        int n = i;
                        ids.add(callers.submit(() -> {
                            TaskGraph g = TaskGraph.named("g-" + caller + "-" + n);
                            g.task("a").cpu(ctx -> {
                                if (n % 5 == 0) {
                                    throw new IllegalStateException("fails");
                                }
                                return 1;
                            });
                            GraphRun run = s.submit(g);
                            try {
                                run.await();
                            } catch (GraphRunException expected) {
                                // the failing fifth
                            }
                            return run.runId();
                        }));
                    }
                }
                List<Long> runs = new java.util.ArrayList<>();
                for (Future<Long> f : ids) {
                    runs.add(f.get(30, TimeUnit.SECONDS));
                }
                assertThat(rec.profiles)
                        .as("variant %d", variant)
                        .extracting(RunProfile::runId)
                        .containsExactlyInAnyOrderElementsOf(runs);
                assertThat(rec.endEventBeforeProfile)
                        .as("the profile comes before the end event")
                        .isEmpty();
                assertThat(rec.profiles).allSatisfy(p -> {
                    assertThat(p.status()).isIn(RunStatus.SUCCEEDED, RunStatus.FAILED);
                    assertThat(p.hasTimings()).isEqualTo(variant != 2);
                    assertThat(p.makespan()).isPositive();
                });
                assertThat(rec.profiles)
                        .filteredOn(p -> p.status() == RunStatus.FAILED)
                        .hasSize(40);
            } finally {
                callers.shutdownNow();
            }
        }
    }

    @Test
    void aCancelledRunIsHandedOverToo() {
        Recording rec = new Recording();
        try (Scheduler s = Scheduler.builder().threads(2).listener(rec).build()) {
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            TaskGraph g = TaskGraph.named("cancelled");
            g.task("spin").cpu(ctx -> {
                started.countDown();
                while (true) {
                    ctx.checkCancelled();
                    Thread.onSpinWait();
                }
            });
            GraphRun run = s.submit(g);
            org.awaitility.Awaitility.await().until(() -> started.getCount() == 0);
            run.cancel();
            assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
            assertThat(rec.profiles)
                    .singleElement()
                    .satisfies(p -> assertThat(p.status()).isEqualTo(RunStatus.CANCELLED));
        }
    }
}
