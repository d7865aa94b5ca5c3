package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.EventDetail;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskEvent;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskScope;
import io.hts.engine.observe.WorkerTime;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Ended;
import io.hts.engine.support.FakeGpuBackend;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Round 4 attacks on docs/engine.md "Observability" and docs/observability.md: task scopes, worker
 * time, readable messages, the Chrome trace stream.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScopeAndWorkerTimeAttackTests {

    // ------------------------------------------------------------------ a recording scope

    /** Checks per thread that scopes nest (LIFO) and records every open and close. */
    static final class Recorder implements TaskScope {
        final String label;
        final List<String> problems = new CopyOnWriteArrayList<>();
        final AtomicInteger opens = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        final Map<String, AtomicInteger> opensByTask = new ConcurrentHashMap<>();
        final ThreadLocal<Deque<String>> stack = ThreadLocal.withInitial(ArrayDeque::new);
        final List<String> threads = new CopyOnWriteArrayList<>();

        Recorder(String label) {
            this.label = label;
        }

        @Override
        public Scope open(long runId, String graph, String task) {
            opens.incrementAndGet();
            opensByTask.computeIfAbsent(task, k -> new AtomicInteger()).incrementAndGet();
            Thread t = Thread.currentThread();
            threads.add(t.getName());
            String key = runId + "/" + task + "@" + System.identityHashCode(new Object());
            stack.get().push(key);
            return () -> {
                closes.incrementAndGet();
                if (Thread.currentThread() != t) {
                    problems.add(label + " closed " + key + " on "
                            + Thread.currentThread().getName() + " not " + t.getName());
                    return;
                }
                String top = stack.get().peek();
                if (!key.equals(top)) {
                    problems.add(label + " closed " + key + " but top of stack is " + top);
                }
                stack.get().remove(key);
            };
        }
    }

    // ------------------------------------------------------------------ 1. scopes

    @Test
    void scopesSurroundEveryAttemptOfRetriedTasksOnCpuAndGpu() {
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .taskScope(a)
                .taskScope(b)
                .logContext(true)
                .gpuBackend(new FakeGpuBackend(2))
                .build()) {
            TaskGraph g = TaskGraph.named("retried");
            AtomicInteger cpuTries = new AtomicInteger();
            AtomicInteger gpuTries = new AtomicInteger();
            AtomicInteger failing = new AtomicInteger();
            Task<Integer> cpu = g.task("cpu").retries(3).cpu(ctx -> {
                if (cpuTries.incrementAndGet() < 4) {
                    throw new IllegalStateException("try " + cpuTries.get());
                }
                return 1;
            });
            g.task("gpu").after(cpu).retries(2).gpu(ctx -> {
                if (gpuTries.incrementAndGet() < 3) {
                    throw new IllegalStateException("gpu try " + gpuTries.get());
                }
                return 2;
            });
            TaskGraph g2 = TaskGraph.named("failing");
            g2.task("alwaysFails").retries(2).cpu(ctx -> {
                failing.incrementAndGet();
                throw new IllegalStateException("every attempt");
            });
            GraphRun run = Ended.run(s.submit(g));
            Ended.run(s.submit(g2));
            assertThat(run.state(cpu)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(a.opensByTask.get("cpu")).hasValue(4);
            assertThat(a.opensByTask.get("gpu")).hasValue(3);
            assertThat(a.opensByTask.get("alwaysFails")).hasValue(failing.get());
            assertThat(failing.get()).isEqualTo(3);
            assertThat(a.opens.get()).isEqualTo(a.closes.get());
            assertThat(b.opens.get()).isEqualTo(b.closes.get());
            assertThat(a.problems).isEmpty();
            assertThat(b.problems).isEmpty();
            assertThat(a.threads).anyMatch(t -> t.equals("fake-gpu-stream"));
        }
    }

    @Test
    void aTimedOutBodyThatIgnoresInterruptsKeepsItsScopeUntilItReturns() throws Exception {
        Recorder a = new Recorder("a");
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean bodyReturned = new AtomicBoolean();
        AtomicBoolean closedBeforeReturn = new AtomicBoolean();
        CountDownLatch closed = new CountDownLatch(1);
        TaskScope watcher = (runId, graph, task) -> () -> {
            if (!bodyReturned.get()) {
                closedBeforeReturn.set(true);
            }
            closed.countDown();
        };
        try (Scheduler s =
                Scheduler.builder().threads(2).taskScope(a).taskScope(watcher).build()) {
            TaskGraph g = TaskGraph.named("stubborn");
            g.task("stubborn").timeout(Duration.ofMillis(30)).cpu(ctx -> {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (release.getCount() > 0 && System.nanoTime() < until) {
                    try {
                        release.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException ignored) {
                        // ignores interrupts
                    }
                }
                bodyReturned.set(true);
                return 1;
            });
            GraphRun run = Ended.run(s.submit(g));
            assertThat(run.status().toString()).isEqualTo("FAILED");
            assertThat(closed.getCount())
                    .as("scope closed while the abandoned body still runs")
                    .isEqualTo(1);
            release.countDown();
            assertThat(closed.await(20, TimeUnit.SECONDS)).isTrue();
            assertThat(closedBeforeReturn).isFalse();
            // the watcher (added last) closes first; the first scope closes right after it, on the body's thread
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> a.opens.get() == a.closes.get());
            assertThat(a.problems).isEmpty();
        }
    }

    @Test
    void scopesStayBalancedUnderCancelsAtRandomMoments() {
        Recorder a = new Recorder("a");
        Recorder b = new Recorder("b");
        Random random = new Random(42);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .taskScope(a)
                .taskScope(b)
                .gpuBackend(new FakeGpuBackend(2))
                .build()) {
            for (int round = 0; round < 150; round++) {
                TaskGraph g = TaskGraph.named("cancelled" + round);
                List<Task<Integer>> layer = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    int k = i;
                    Task<Integer> t = (i % 3 == 0
                            ? g.task("t" + i).gpu(ctx -> spin(50_000 * k))
                            : g.task("t" + i).retries(1).cpu(ctx -> {
                                spin(50_000 * k);
                                if (k == 5 && ctx.attempt() == 0) {
                                    throw new IllegalStateException("once");
                                }
                                ctx.checkCancelled();
                                return k;
                            }));
                    layer.add(t);
                }
                for (int i = 0; i < 8; i++) {
                    int k = i;
                    g.task("u" + i).after(layer.get(i), layer.get((i + 1) % 8)).cpu(ctx -> spin(30_000 * k));
                }
                GraphRun run = s.submit(g);
                int delay = random.nextInt(400_000);
                spin(delay);
                run.cancel();
                Ended.run(run);
            }
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> a.opens.get() == a.closes.get() && b.opens.get() == b.closes.get());
            assertThat(a.problems).isEmpty();
            assertThat(b.problems).isEmpty();
        }
    }

    private static int spin(long nanos) {
        long until = System.nanoTime() + nanos;
        int n = 0;
        while (System.nanoTime() < until) {
            n++;
        }
        return n;
    }

    @Test
    void nestedRunsGetTheirOwnScopesNestedInsideTheOuterBodysScopes() {
        Recorder a = new Recorder("a");
        List<String> seen = new CopyOnWriteArrayList<>();
        TaskScope names = (runId, graph, task) -> {
            seen.add("open " + graph + "/" + task);
            return () -> seen.add("close " + graph + "/" + task);
        };
        try (Scheduler s =
                Scheduler.builder().threads(1).taskScope(a).taskScope(names).build()) {
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("i1").cpu(ctx -> 1);
            TaskGraph outer = TaskGraph.named("outer");
            outer.task("o").cpu(ctx -> {
                ctx.execute(inner);
                return 2;
            });
            s.execute(outer);
        }
        assertThat(seen).containsExactly("open outer/o", "open inner/i1", "close inner/i1", "close outer/o");
        assertThat(a.problems).isEmpty();
    }

    @Test
    void scopesThatThrowErrorsOnOpenOrCloseDoNotChangeOutcomes() {
        AtomicInteger goodCloses = new AtomicInteger();
        TaskScope throwsOnOpen = (runId, graph, task) -> {
            throw new StackOverflowError("scope open");
        };
        TaskScope good = (runId, graph, task) -> goodCloses::incrementAndGet;
        TaskScope throwsOnClose = (runId, graph, task) -> () -> {
            throw new AssertionError("scope close");
        };
        TaskScope returnsNull = (runId, graph, task) -> null;
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .taskScope(throwsOnOpen)
                .taskScope(good)
                .taskScope(throwsOnClose)
                .taskScope(returnsNull)
                .gpuBackend(new FakeGpuBackend(1))
                .failureMode(io.hts.engine.run.FailureMode.CONTINUE)
                .build()) { // fail-fast could cancel the others
            TaskGraph g = TaskGraph.named("errors");
            Task<Integer> ok = g.task("ok").cpu(ctx -> 1);
            Task<Integer> gpuOk = g.task("gpuOk").gpu(ctx -> 3);
            Task<Integer> bad = g.task("bad").cpu(ctx -> {
                throw new IllegalArgumentException("the body's own");
            });
            GraphRun run = Ended.run(s.submit(g));
            assertThat(run.result(ok)).isEqualTo(1);
            assertThat(run.state(gpuOk)).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.error(bad)).get().isInstanceOf(IllegalArgumentException.class);
            assertThat(goodCloses.get()).isEqualTo(3);
        }
    }

    // ------------------------------------------------------------------ 3. worker time

    private static void assertAddsUp(RunProfile p, String what) {
        WorkerTime w = p.workerTime();
        long sum = w.work().toNanos()
                + w.schedulerDelay().toNanos()
                + w.shapeIdle().toNanos();
        assertThat(w.work().isNegative()
                        || w.schedulerDelay().isNegative()
                        || w.shapeIdle().isNegative())
                .as(what + ": negative part " + w)
                .isFalse();
        assertThat(p.idealGap().isNegative()).as(what + ": idealGap").isFalse();
        assertThat(w.capacity().toNanos())
                .as(what + ": capacity == workers x makespan")
                .isEqualTo(p.parallelism() * p.makespan().toNanos());
        assertThat(sum)
                .as(what + ": work + schedulerDelay + shapeIdle == capacity; " + w)
                .isEqualTo(w.capacity().toNanos());
    }

    @ParameterizedTest(name = "profiling {0}")
    @ValueSource(booleans = {true, false})
    void workerTimeAddsUpForFailedCancelledRetriedTimedOutGpuAndUnprofiledRuns(boolean profiling) throws Exception {
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .profiling(profiling)
                .gpuBackend(new FakeGpuBackend(2))
                .build()) {
            TaskGraph g = TaskGraph.named("mixed");
            AtomicInteger tries = new AtomicInteger();
            Task<Integer> r = g.task("retried").retries(2).cpu(ctx -> {
                spin(200_000);
                if (tries.incrementAndGet() < 3) {
                    throw new IllegalStateException("again");
                }
                return 1;
            });
            g.task("gpu").after(r).gpu(ctx -> spin(300_000));
            CountDownLatch release = new CountDownLatch(1);
            g.task("timedOut").timeout(Duration.ofMillis(5)).cpu(ctx -> {
                while (!release.await(20, TimeUnit.SECONDS)) {
                    // keeps waiting
                }
                return 0;
            });
            Task<Integer> fails = g.task("fails").cpu(ctx -> {
                spin(100_000);
                throw new IllegalStateException("boom");
            });
            g.task("child").after(fails).cpu(ctx -> 1);
            GraphRun run = Ended.run(s.submit(g));
            release.countDown();
            assertAddsUp(run.profile(), "failed run, profiling " + profiling);

            TaskGraph c = TaskGraph.named("cancelled");
            CountDownLatch started = new CountDownLatch(1);
            Task<Integer> block = c.task("block").cpu(ctx -> {
                started.countDown();
                while (!ctx.isCancelled()) {
                    Thread.onSpinWait();
                }
                return 1;
            });
            c.task("after").after(block).cpu(ctx -> 2);
            GraphRun cr = s.submit(c);
            assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
            cr.cancel();
            Ended.run(cr);
            assertAddsUp(cr.profile(), "cancelled run, profiling " + profiling);

            TaskGraph empty = TaskGraph.named("nothingRan");
            Task<Integer> f = empty.task("first").cpu(ctx -> {
                throw new IllegalStateException("x");
            });
            empty.task("second").after(f).cpu(ctx -> 1);
            assertAddsUp(Ended.run(s.submit(empty)).profile(), "nothing-ran run, profiling " + profiling);
        }
    }

    /**
     * A body waiting for a nested run helps on its worker (WorkStealingPool.helpUntil): another task
     * of the same run then runs on that worker while the outer task is still running. With one
     * worker the run's CPU tasks overlap, so their durations add up to more than workers x
     * makespan.
     */
    @Test
    void workerTimeAddsUpWhenAWaitingBodyHelpsRunItsOwnRunsTasks() throws Exception {
        try (Scheduler s =
                Scheduler.builder().threads(1).gpuBackend(new FakeGpuBackend(2)).build()) {
            CountDownLatch aStarted = new CountDownLatch(1);
            CountDownLatch bDone = new CountDownLatch(1);
            TaskGraph nested = TaskGraph.named("nested");
            nested.task("x").gpu(ctx -> bDone.await(20, TimeUnit.SECONDS));
            TaskGraph g = TaskGraph.named("helping");
            g.task("a").cpu(ctx -> {
                aStarted.countDown();
                ctx.execute(nested);
                return 1;
            });
            Task<Boolean> c = g.task("c").gpu(ctx -> aStarted.await(20, TimeUnit.SECONDS));
            g.task("b").after(c).cpu(ctx -> {
                spin(20_000_000);
                bDone.countDown();
                return 2;
            });
            GraphRun run = s.execute(g);
            RunProfile p = run.profile();
            assertAddsUp(p, "one worker, a body helping while it waits");
        }
    }

    // ------------------------------------------------------------------ 4. messages

    private static final Pattern ISO = Pattern.compile("PT[0-9.]+[HMS]|PT-");
    private static final Pattern ONE_PLURAL =
            Pattern.compile("(^|[^0-9.])1 (tasks|edges|attempts|runs|retries|events)\\b");

    @Test
    void eventDetailsReadLikeAPersonWroteThem() {
        List<String> texts = new CopyOnWriteArrayList<>();
        TaskListener l = new TaskListener() {
            @Override
            public void onEvent(TaskEvent e) {
                if (e.detail() != null) {
                    texts.add(e.type() + " detail: " + e.detail());
                }
                if (e.error() != null) {
                    texts.add(e.type() + " error: " + e.error().getMessage());
                }
            }

            @Override
            public boolean wantsRoutineEvents() {
                return true;
            }
        };
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .listener(l)
                .eventDetail(EventDetail.ALL)
                .build()) {
            TaskGraph one = TaskGraph.named("one");
            one.task("only").cpu(ctx -> 1);
            s.execute(one);
            TaskGraph two = TaskGraph.named("two");
            Task<Integer> t1 = two.task("t1").cpu(ctx -> 1);
            two.task("t2").after(t1).cpu(ctx -> 2);
            s.execute(two);
        }
        List<String> bad = texts.stream()
                .filter(t -> ISO.matcher(t).find() || ONE_PLURAL.matcher(t).find())
                .toList();
        assertThat(bad).as("all texts: " + texts).isEmpty();
    }

    @Test
    void aTaskTimeOutSaysItsLimitReadablyInEventsAndExceptions() throws Exception {
        List<String> texts = new CopyOnWriteArrayList<>();
        TaskListener l = e -> {
            if (e.error() != null) {
                texts.add(e.type() + ": " + e.error().getMessage());
            }
        };
        try (Scheduler s = Scheduler.builder().threads(2).listener(l).build()) {
            TaskGraph g = TaskGraph.named("slow");
            g.task("slow").timeout(Duration.ofMillis(50)).cpu(ctx -> {
                new CountDownLatch(1).await(20, TimeUnit.SECONDS); // never counted down: the time limit interrupts it
                return 1;
            });
            GraphRun run = s.submit(g);
            Throwable t = catchThrowable(() -> run.await(Duration.ofSeconds(30)));
            texts.add("exception: " + t.getMessage());
            texts.add("profile cause: " + run.profile().tasks().get(0).cause());
        }
        List<String> bad = texts.stream().filter(t -> ISO.matcher(t).find()).toList();
        assertThat(bad).as("texts with ISO-8601 durations").isEmpty();
    }

    @Test
    void aDiagnosisCountsTheTasksItLeftOutReadably() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch started = new CountDownLatch(1);
            TaskGraph g = TaskGraph.named("wide");
            Task<Integer> blocker = g.task("blocker").cpu(ctx -> {
                started.countDown();
                release.await(20, TimeUnit.SECONDS);
                return 1;
            });
            for (int i = 0; i < 50; i++) {
                g.task("d" + i).after(blocker).cpu(ctx -> 2);
            }
            GraphRun run = s.submit(g);
            assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
            String diagnosis = run.diagnose().toString();
            Throwable t = catchThrowable(() -> run.await(Duration.ofMillis(5)));
            release.countDown();
            run.await(Duration.ofSeconds(20));
            assertThat(t).isInstanceOf(TimeoutException.class);
            assertThat(t.getMessage()).doesNotContainPattern(ISO.pattern()).doesNotContainPattern(ONE_PLURAL.pattern());
            assertThat(diagnosis)
                    .as(diagnosis)
                    .doesNotContainPattern(ONE_PLURAL.pattern())
                    .doesNotContainPattern(ISO.pattern());
        }
    }

    @Test
    void runProfileToStringIsReadable() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph one = TaskGraph.named("one");
            one.task("only").cpu(ctx -> 1);
            String text = s.execute(one).profile().toString();
            assertThat(text)
                    .contains("1 task,")
                    .doesNotContainPattern(ISO.pattern())
                    .doesNotContainPattern(ONE_PLURAL.pattern());
        }
    }

    // ------------------------------------------------------------------ 5. chrome trace

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static void assertTraceConsistent(RunProfile p, String what) throws Exception {
        String text = p.toChromeTrace();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (InputStream in = p.chromeTraceStream()) {
            byte[] buf = new byte[7];
            int n;
            while ((n = in.read(buf, 0, buf.length)) > 0) {
                bytes.write(buf, 0, n);
            }
            assertThat(in.read()).isEqualTo(-1);
        }
        ByteArrayOutputStream single = new ByteArrayOutputStream();
        try (InputStream in = p.chromeTraceStream()) {
            int b;
            while ((b = in.read()) != -1) {
                single.write(b);
            }
        }
        StringBuilder appended = new StringBuilder();
        p.writeChromeTrace(appended);
        assertThat(bytes.toByteArray()).as(what + " stream vs string").isEqualTo(text.getBytes(StandardCharsets.UTF_8));
        assertThat(single.toByteArray())
                .as(what + " byte-wise stream")
                .isEqualTo(text.getBytes(StandardCharsets.UTF_8));
        assertThat(appended.toString()).as(what + " appendable").isEqualTo(text);
        JsonNode node = JSON.readTree(text);
        assertThat(node).as(what).isNotNull();
    }

    @Test
    void chromeTraceStreamEqualsTheStringAndIsJsonForHostileNames() throws Exception {
        String[] names = {
            "q\"uote",
            "back\\slash",
            "ctl\u0001\u001f\t\n\r",
            "uni\u00e9\u4e2d\ud83d\ude00",
            "\u2028ls\u2029",
            "</script>",
            "lone\ud800surrogate"
        };
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("g\"\\\u0002\ud83d\ude00");
            Task<Integer> prev = null;
            for (String n : names) {
                try {
                    var b = g.task(n);
                    prev = prev == null ? b.cpu(ctx -> 1) : b.after(prev).cpu(ctx -> 1);
                } catch (IllegalArgumentException refused) {
                    // a name the graph refuses
                }
            }
            g.task("fails").cpu(ctx -> {
                throw new IllegalStateException("cause with \"quotes\" and \\ and \u0000");
            });
            GraphRun run = Ended.run(s.submit(g));
            assertTraceConsistent(run.profile(), "hostile names");

            TaskGraph none = TaskGraph.named("nothingRan");
            Task<Integer> f = none.task("f").cpu(ctx -> {
                throw new IllegalStateException("x");
            });
            none.task("never").after(f).cpu(ctx -> 1);
            assertTraceConsistent(Ended.run(s.submit(none)).profile(), "nothing ran");

            TaskGraph bar = TaskGraph.named("onlyBarrier");
            bar.barrier("b");
            assertTraceConsistent(Ended.run(s.submit(bar)).profile(), "barrier only");
        }
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            TaskGraph g = TaskGraph.named("unprofiled");
            g.task("x").cpu(ctx -> 1);
            assertTraceConsistent(s.execute(g).profile(), "profiling off");
        }
    }
}
