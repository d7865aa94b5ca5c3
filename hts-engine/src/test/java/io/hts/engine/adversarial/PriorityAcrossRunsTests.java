package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Priorities hold across runs, whatever the way the normal work was submitted: with every worker
 * busy, normal runs then urgent ones ({@code priority(4)}) are submitted, then the workers are
 * released. The normal work waits in every place the pool keeps it: one-task runs from outside
 * (the shared queue), runs of many roots (seeded in steps), runs a task body submitted (its
 * worker's own deque); the urgent runs come from outside or from a body.
 *
 * <p>What a worker guarantees is the order in which it <em>picks</em> its tasks: each worker takes
 * every queued urgent task it can before any normal one, so the tasks each worker starts are the
 * urgent ones first, then the normal ones. With one worker that is the order of the whole run.
 * With several, a worker that picked the last urgent task may be preempted by the operating
 * system before its body begins, while another worker, finding no urgent task left, starts normal
 * ones; so across workers the test checks each worker's own order.
 */
class PriorityAcrossRunsTests {

    private static final int ROUNDS = 150;

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void eachWorkerStartsTheQueuedUrgentTasksBeforeTheQueuedNormalOnes(int workers) throws Exception {
        SplittableRandom random = new SplittableRandom(11 * workers);
        List<String> broken = new ArrayList<>();
        try (Scheduler scheduler = Scheduler.builder().threads(workers).build()) {
            for (int round = 0; round < ROUNDS && broken.size() < 3; round++) {
                Round r = new Round(scheduler, random, workers, round);
                r.run();
                r.started.forEach((worker, order) -> {
                    String s = order.toString();
                    if (s.lastIndexOf('u') > s.indexOf('n') && s.indexOf('n') >= 0) {
                        broken.add(r.describe() + " " + worker + " started " + s);
                    }
                });
            }
        }
        assertThat(broken)
                .as("workers that started a normal task before a queued urgent one")
                .isEmpty();
    }

    /** One round; {@code started}: per worker, the order its tasks started in, 'n' normal and 'u' urgent. */
    private static final class Round {
        final Map<String, StringBuffer> started = new ConcurrentHashMap<>();
        final Scheduler scheduler;
        final int workers;
        final int round;
        final int insideNormal; // normal runs a body submits
        final boolean urgentInside;
        final int outsideNormal;
        final SplittableRandom random;
        boolean manyRoots;

        Round(Scheduler scheduler, SplittableRandom random, int workers, int round) {
            this.scheduler = scheduler;
            this.random = random;
            this.workers = workers;
            this.round = round;
            this.insideNormal = random.nextInt(3) == 0 ? 1 + random.nextInt(20) : 0;
            this.urgentInside = random.nextInt(3) == 0;
            this.outsideNormal = 20 + random.nextInt(60);
        }

        String describe() {
            return "round " + round + " [" + insideNormal + " normal runs from a body, " + outsideNormal
                    + " from outside" + (manyRoots ? " (some of many roots)" : "") + ", urgent runs from "
                    + (urgentInside ? "a body" : "outside") + "]:";
        }

        void record(char kind) {
            started.computeIfAbsent(Thread.currentThread().getName(), k -> new StringBuffer())
                    .append(kind);
        }

        void run() throws Exception {
            CountDownLatch busy = new CountDownLatch(workers);
            CountDownLatch submittedInside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<GraphRun> inside = new ArrayList<>();
            List<GraphRun> runs = new ArrayList<>();
            TaskGraph blockers = TaskGraph.named("blockers-" + round);
            for (int w = 0; w < workers; w++) {
                boolean submitter = w == 0;
                blockers.task("block-" + w).cpu(ctx -> {
                    busy.countDown();
                    if (submitter) {
                        busy.await(30, TimeUnit.SECONDS); // every worker busy: nothing submitted now starts
                        for (int k = 0; k < insideNormal; k++) {
                            inside.add(scheduler.submit(normal("inside-" + k, 1)));
                        }
                        for (int k = 0; urgentInside && k < 10; k++) {
                            inside.add(scheduler.submit(urgent("inside-" + k)));
                        }
                        submittedInside.countDown();
                    }
                    return release.await(30, TimeUnit.SECONDS);
                });
            }
            runs.add(scheduler.submit(blockers));
            assertThat(busy.await(30, TimeUnit.SECONDS)).isTrue();
            for (int k = 0; k < outsideNormal; k++) {
                int roots = random.nextInt(8) == 0 ? 65 + random.nextInt(200) : 1; // many roots: seeded in steps
                manyRoots |= roots > 1;
                runs.add(scheduler.submit(normal("outside-" + k, roots)));
            }
            for (int k = 0; !urgentInside && k < 10; k++) {
                runs.add(scheduler.submit(urgent("outside-" + k)));
            }
            assertThat(submittedInside.await(30, TimeUnit.SECONDS)).isTrue();
            release.countDown();
            for (GraphRun r : runs) {
                r.await(Duration.ofSeconds(30));
            }
            for (GraphRun r : inside) { // written before submittedInside counted down
                r.await(Duration.ofSeconds(30));
            }
        }

        private TaskGraph normal(String name, int roots) {
            TaskGraph g = TaskGraph.named("normal-" + name);
            for (int r = 0; r < roots; r++) {
                g.task("n" + r).cpu(ctx -> {
                    record('n');
                    return null;
                });
            }
            return g;
        }

        private TaskGraph urgent(String name) {
            TaskGraph g = TaskGraph.named("urgent-" + name);
            g.task("u").priority(4).cpu(ctx -> {
                record('u');
                return null;
            });
            return g;
        }
    }
}
