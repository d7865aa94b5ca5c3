package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ProfilerTests {

    /**
     * a -> (slow1 -> slow2) and a -> fast -> join; the slow branch is the critical path by
     * construction, not by the clock's luck: fast starts only once slow1 runs, and slow1 works its
     * 30 ms only after fast ended, so slow1 alone outlasts fast (on two workers).
     */
    private static TaskGraph branches() {
        CountDownLatch slow1Started = new CountDownLatch(1);
        CountDownLatch fastEnded = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("branches");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        Task<Integer> slow1 = g.task("slow1").after(a).cpu(ctx -> {
            slow1Started.countDown();
            fastEnded.await(10, TimeUnit.SECONDS);
            Blocking.busyFor(Duration.ofMillis(30));
            return 2;
        });
        Task<Integer> slow2 = g.task("slow2").after(slow1).cpu(ctx -> {
            Blocking.busyFor(Duration.ofMillis(30));
            return 3;
        });
        Task<Integer> fast = g.task("fast").after(a).cpu(ctx -> {
            slow1Started.await(10, TimeUnit.SECONDS);
            fastEnded.countDown();
            return 4;
        });
        g.task("join").after(slow2, fast).cpu(ctx -> 5);
        return g;
    }

    /**
     * A busy worker takes the end of one task as the start of the next (one clock read per task):
     * every start is still at or after the task's ready time, every end at or after its start, and
     * tasks on one worker never overlap.
     */
    @Test
    void timingsStayOrderedWhenTasksFollowEachOtherOnAWorker() {
        TaskGraph g = TaskGraph.named("chain-and-fan");
        Task<Integer> previous = g.task("c0").cpu(ctx -> 0);
        for (int i = 1; i < 2_000; i++) {
            Task<Integer> p = previous;
            previous = g.task("c" + i).after(p).cpu(ctx -> ctx.input(p) + 1);
        }
        Task<Integer> last = previous;
        g.group("fan", 500, (i, t) -> t.after(last).cpu(ctx -> ctx.input(last) + i));
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            RunProfile p = s.execute(g).profile();
            assertThat(p.tasks()).allSatisfy(t -> {
                assertThat(t.ran()).isTrue();
                assertThat(t.startNanos()).isGreaterThanOrEqualTo(t.readyNanos());
                assertThat(t.endNanos()).isGreaterThanOrEqualTo(t.startNanos());
            });
            Map<Integer, java.util.List<TaskTiming>> byWorker = new java.util.HashMap<>();
            p.tasks()
                    .forEach(t -> byWorker.computeIfAbsent(t.lane(), k -> new java.util.ArrayList<>())
                            .add(t));
            byWorker.values().forEach(list -> {
                list.sort(java.util.Comparator.comparingLong(TaskTiming::startNanos));
                for (int k = 1; k < list.size(); k++) {
                    assertThat(list.get(k).startNanos())
                            .as(
                                    "start of %s after end of %s",
                                    list.get(k).taskName(), list.get(k - 1).taskName())
                            .isGreaterThanOrEqualTo(list.get(k - 1).endNanos());
                }
            });
        }
    }

    @Test
    void aRunProfileHasPerTaskTimesTheCriticalPathAndWorkerUsage() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.execute(branches());
            RunProfile p = run.profile();
            assertThat(p.hasTimings()).isTrue();
            assertThat(p.tasks()).hasSize(5).allSatisfy(t -> {
                assertThat(t.state()).isEqualTo(TaskState.SUCCEEDED);
                assertThat(t.device()).isEqualTo(Device.CPU);
                assertThat(t.lane()).isBetween(0, 1);
                assertThat(t.attempts()).isOne();
                assertThat(t.ran()).isTrue();
                assertThat(t.startNanos()).isGreaterThanOrEqualTo(t.readyNanos());
            });
            assertThat(p.criticalPath().tasks()).containsExactly("a", "slow1", "slow2", "join");
            assertThat(p.criticalPath().length()).isGreaterThanOrEqualTo(Duration.ofMillis(60));
            assertThat(p.makespan()).isGreaterThanOrEqualTo(p.criticalPath().length());
            assertThat(p.totalWork()).isGreaterThanOrEqualTo(Duration.ofMillis(60));
            assertThat(p.idealGap()).isGreaterThanOrEqualTo(Duration.ZERO);
            assertThat(p.idealGapRatio()).isBetween(0.0, 1.0);
            WorkerTime w = p.workerTime();
            assertThat(w.work().plus(w.schedulerDelay()).plus(w.shapeIdle()))
                    .as("every worker nanosecond, once")
                    .isEqualTo(w.capacity());
            assertThat(w.schedulerShare() + w.shapeShare()).isBetween(0.0, 1.0);
            assertThat(p.workers()).hasSize(2);
            assertThat(p.workers().stream().mapToLong(WorkerUsage::tasks).sum()).isEqualTo(5);
            assertThat(p.slowest(2)).extracting(TaskTiming::taskName).containsExactlyInAnyOrder("slow1", "slow2");
            assertThat(p.toString()).contains("branches").contains("critical path");
        }
    }

    @Test
    void theMeanWaitIsTheMeanOfTheTasksWaitsAndCountsATaskHeldBackByABusyWorker() {
        long held = Duration.ofMillis(3).toNanos();
        TaskGraph g = TaskGraph.named("held-back");
        Task<Integer> a = g.task("a").cpu(ctx -> 1);
        for (String name : new String[] {"b", "c"}) {
            g.task(name).after(a).cpu(ctx -> {
                Blocking.busyFor(Duration.ofMillis(3)); // busy, not asleep: the only worker is taken
                return 2;
            });
        }
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            RunProfile p = s.execute(g).profile();
            long sum = 0;
            long longest = 0;
            for (TaskTiming t : p.tasks()) {
                sum += t.waitNanos();
                longest = Math.max(longest, t.waitNanos());
            }
            assertThat(p.meanWait()).isEqualTo(Duration.ofNanos(sum / 3));
            // b and c became ready together on the only worker: the one that ran second waited for the first's body
            assertThat(longest).isGreaterThanOrEqualTo(held);
            assertThat(p.meanWait()).isGreaterThanOrEqualTo(Duration.ofNanos(held / 3));
        }
    }

    @Test
    void theProfilerKeepsRecentRunsAndPerNamePercentiles() {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(3).build()) {
            TaskGraph g = TaskGraph.named("stats");
            TaskGroup<Integer> shards = g.group(
                    "shard",
                    10,
                    (i, t) -> t.cpu(ctx -> {
                        Blocking.busyFor(Duration.ofMillis(i + 1)); // shard i: at least i + 1 ms
                        return i;
                    }));
            g.task("merge").after(shards).cpu(ctx -> 0);
            Set<Long> ids = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                ids.add(s.execute(g).runId());
            }
            Profiler profiler = s.profiler();
            assertThat(profiler.recentRuns()).hasSize(3);
            assertThat(profiler.recordedRuns()).isEqualTo(5);
            long last = profiler.recentRuns().get(2).runId();
            assertThat(profiler.run(last)).isPresent();
            assertThat(profiler.taskStatistics()).containsOnlyKeys(g.name());
            Map<String, TaskStatistics> stats = profiler.taskStatistics().get(g.name());
            assertThat(stats).containsOnlyKeys("shard", "merge");
            assertThat(stats.get("merge").graphName()).isEqualTo(g.name());
            assertThat(stats.get("shard").count())
                    .as("10 shards x 3 retained runs")
                    .isEqualTo(30);
            assertThat(stats.get("merge").count()).isEqualTo(3);
            TaskStatistics shard = stats.get("shard");
            // 30 durations, three each of at least 1, 2, ..., 10 ms: the median is at least the
            // 5 ms shards', the 99th percentile and the maximum at least the 10 ms shards'
            assertThat(shard.p50()).isGreaterThanOrEqualTo(Duration.ofMillis(5)).isLessThanOrEqualTo(shard.p90());
            assertThat(shard.p90()).isGreaterThanOrEqualTo(Duration.ofMillis(9)).isLessThanOrEqualTo(shard.p99());
            assertThat(shard.p99())
                    .isGreaterThanOrEqualTo(Duration.ofMillis(10))
                    .isLessThanOrEqualTo(shard.max());
            assertThat(shard.mean()).isGreaterThanOrEqualTo(Duration.ofMillis(5)); // 5.5 ms at least
            assertThat(profiler.slowestTasks(4)).hasSize(4);
        }
    }

    /** Issue 15 item 9: two graphs' tasks that share a name keep statistics of their own. */
    @Test
    void statisticsOfTwoGraphsThatShareATaskNameAreApart() {
        try (Scheduler s = Scheduler.builder().threads(2).retainedRuns(10).build()) {
            TaskGraph quick = TaskGraph.named("quick");
            quick.task("load").cpu(ctx -> 1);
            TaskGraph slow = TaskGraph.named("slow");
            slow.task("load").cpu(ctx -> 2);
            s.execute(quick);
            s.execute(quick);
            s.execute(slow);
            Map<String, Map<String, TaskStatistics>> stats = s.profiler().taskStatistics();
            assertThat(stats).containsOnlyKeys("quick", "slow");
            assertThat(stats.get("quick").get("load").count()).isEqualTo(2);
            assertThat(stats.get("slow").get("load").count()).isEqualTo(1);
            assertThat(stats.get("slow").get("load").graphName()).isEqualTo("slow");
        }
    }

    /** Issue 15 item 12: no empty GPU track without GPU tasks; written as it goes; numbers without String.format. */
    @Test
    void theChromeTraceHasNoGpuTrackWithoutGpuTasksAndStreamsTheSameText() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("cpu-only");
            g.task("odd\u0001name").cpu(ctx -> 1);
            RunProfile p = s.execute(g).profile();
            String trace = p.toChromeTrace();
            assertThat(trace).contains("CPU (cpu-only)").doesNotContain("GPU (").contains("odd\\u0001name");
            StringBuilder streamed = new StringBuilder();
            p.writeChromeTrace(streamed);
            assertThat(streamed.toString()).isEqualTo(trace);
            assertThat(JsonMapper.builder()
                            .build()
                            .readTree(trace)
                            .get("traceEvents")
                            .isArray())
                    .isTrue();
        }
    }

    /** The trace's microseconds, appended to what the builder holds: three decimals, a negative as 0. */
    @ParameterizedTest(name = "{0} ns: {1}")
    @CsvSource({"0, 0.000", "5, 0.005", "999, 0.999", "1000, 1.000", "1234567, 1234.567", "-3, 0.000"})
    void theTracesMicrosecondsAreWrittenWithoutStringFormat(long nanos, String micros) throws Exception {
        StringBuilder sb = new StringBuilder("ts:");
        ChromeTraceExporter.micros(sb, nanos);
        assertThat(sb.toString()).isEqualTo("ts:" + micros);
    }

    /** The streamed trace is the same bytes as the string, across many buffer fills and multi-byte names. */
    @Test
    void theStreamedTraceIsTheSameBytes() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("größe-\u00e9t\u00e9");
            for (int i = 0; i < 2000; i++) {
                g.task("t\u00e9che-" + i).cpu(ctx -> 1);
            }
            RunProfile p = s.execute(g).profile();
            byte[] expected = p.toChromeTrace().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(expected.length).isGreaterThan(3 * 8192);
            try (java.io.InputStream in = p.chromeTraceStream()) {
                assertThat(in.readAllBytes()).isEqualTo(expected);
            }
            java.io.ByteArrayOutputStream oneByOne = new java.io.ByteArrayOutputStream();
            try (java.io.InputStream in = p.chromeTraceStream()) {
                for (int b; (b = in.read()) >= 0; ) {
                    oneByOne.write(b);
                }
            }
            assertThat(oneByOne.toByteArray()).isEqualTo(expected);
        }
    }

    @Test
    void theChromeTraceIsValidTraceEventJson() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.execute(branches());
            JsonNode root = JsonMapper.builder().build().readTree(run.profile().toChromeTrace());
            assertThat(root.get("displayTimeUnit").asString()).isEqualTo("ms");
            assertThat(root.get("otherData").get("graph").asString()).isEqualTo("branches");
            JsonNode events = root.get("traceEvents");
            assertThat(events.isArray()).isTrue();
            int complete = 0;
            for (JsonNode e : events) {
                String ph = e.get("ph").asString();
                assertThat(ph).isIn("X", "M");
                assertThat(e.get("pid").isInt()).isTrue();
                if (ph.equals("X")) {
                    complete++;
                    assertThat(e.get("name").isString()).isTrue();
                    assertThat(e.get("ts").isNumber()).isTrue();
                    assertThat(e.get("dur").isNumber()).isTrue();
                    assertThat(e.get("dur").asDouble()).isNotNegative();
                    assertThat(e.get("tid").isInt()).isTrue();
                    assertThat(e.get("args").get("state").asString()).isEqualTo("SUCCEEDED");
                } else {
                    assertThat(e.get("name").asString()).isIn("process_name", "thread_name");
                    assertThat(e.get("args").get("name").isString()).isTrue();
                }
            }
            assertThat(complete).isEqualTo(5);
        }
    }

    @Test
    void namesAreEscapedInJsonAndDot() throws Exception {
        try (Scheduler s = Scheduler.builder().threads(1).build()) {
            TaskGraph g = TaskGraph.named("quote\"graph");
            g.task("a \"quoted\"\\ name\n").cpu(ctx -> 1);
            RunProfile p = s.execute(g).profile();
            JsonNode root = JsonMapper.builder().build().readTree(p.toChromeTrace());
            assertThat(root.get("traceEvents").findValuesAsString("name")).contains("a \"quoted\"\\ name\n");
            assertThat(p.toDot()).startsWith("digraph \"quote\\\"graph\"");
        }
    }

    @Test
    void dotShowsEdgesStatesAndDurations() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            GraphRun run = s.execute(branches());
            String dot = run.profile().toDot();
            assertThat(dot).startsWith("digraph \"branches\" {").endsWith("}\n");
            assertThat(dot)
                    .contains("t0 -> t1;")
                    .contains("t1 -> t2;")
                    .contains("t2 -> t4;")
                    .contains("t3 -> t4;");
            assertThat(dot).contains("palegreen").contains(" ms");
            assertThat(DotExporter.export(run.graph().compile()))
                    .contains("t0 -> t3;")
                    .doesNotContain("palegreen");
        }
    }

    @Test
    void withProfilingOffRunsStillCompleteAndReportMakespanOnly() {
        try (Scheduler s = Scheduler.builder().threads(2).profiling(false).build()) {
            GraphRun run = s.execute(branches());
            RunProfile p = run.profile();
            assertThat(p.hasTimings()).isFalse();
            assertThat(p.makespan()).isPositive();
            assertThat(p.slowest(3)).isEmpty();
            assertThat(s.profiler().recentRuns()).isEmpty();
        }
    }

    @Test
    void retainedProfilesAreBoundedInBytesCountingAGraphsTopologyOnce() {
        TaskGraph g = TaskGraph.named("big");
        g.group("t", 100, (i, t) -> t.cpu(ctx -> i));
        long one;
        try (Scheduler probe = Scheduler.builder().threads(2).build()) {
            one = probe.execute(g).profile().estimatedBytes();
        }
        long topology = g.compile().estimatedBytes();
        long perRun = one - topology;
        long bound = topology + 2 * perRun + perRun / 2;
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .retainedRuns(10)
                .retainedProfileBytes(bound)
                .build()) {
            for (int i = 0; i < 5; i++) {
                s.execute(g);
            }
            assertThat(s.profiler().recentRuns())
                    .as("runs of one graph share its topology: two fit")
                    .hasSize(2);
            assertThat(s.profiler().retainedBytesNow())
                    .isEqualTo(topology + 2 * perRun)
                    .isLessThanOrEqualTo(bound);
            TaskGraph huge = TaskGraph.named("huge");
            huge.group("t", 5000, (i, t) -> t.cpu(ctx -> i));
            s.execute(huge);
            assertThat(s.profiler().notKeptRuns())
                    .as("a profile larger than the whole bound is not kept")
                    .isOne();
            assertThat(s.profiler().recentRuns())
                    .extracting(RunProfile::graphName)
                    .containsOnly("big");
        }
    }

    private static TaskGraph pair(String name) {
        TaskGraph g = TaskGraph.named(name);
        g.task("x").cpu(ctx -> 1);
        g.task("y").cpu(ctx -> 2);
        return g;
    }

    /** A run of {@link #pair} in which x took {@code x} ns and y {@code y} ns. */
    private static RunProfile pairRun(TaskGraph g, long runId, long x, long y) {
        return RecordedRun.of(g)
                .runId(runId)
                .ran("x", Device.CPU, 0, 0, x)
                .ran("y", Device.CPU, 1, 0, y)
                .finished(Math.max(x, y), io.hts.engine.graph.RunStatus.SUCCEEDED)
                .profile();
    }

    @Test
    void aProfileAsLargeAsTheWholeBoundIsKeptAndOneByteLargerIsNot() {
        RunProfile p = pairRun(pair("g"), 1, 10, 20);
        Profiler exact = new Profiler(5, p.estimatedBytes());
        exact.record(p);
        assertThat(exact.recentRuns()).containsExactly(p);
        assertThat(exact.retainedBytesNow()).isEqualTo(p.estimatedBytes());
        assertThat(exact.notKeptRuns()).isZero();
        Profiler smaller = new Profiler(5, p.estimatedBytes() - 1);
        smaller.record(p);
        assertThat(smaller.recentRuns()).isEmpty();
        assertThat(smaller.retainedBytesNow()).isZero();
        assertThat(smaller.notKeptRuns()).isOne();
        assertThat(smaller.recordedRuns()).isOne();
    }

    @Test
    void runsOfOneGraphFillTheBoundToTheByteAndOneByteLessEvictsTheOldest() {
        TaskGraph g = pair("g");
        RunProfile first = pairRun(g, 1, 10, 20);
        RunProfile second = pairRun(g, 2, 30, 40);
        long topology = g.compile().estimatedBytes();
        long own = first.estimatedBytes() - topology;
        Profiler full = new Profiler(5, topology + 2 * own);
        full.record(first);
        full.record(second);
        assertThat(full.recentRuns()).containsExactly(first, second);
        assertThat(full.retainedBytesNow()).isEqualTo(topology + 2 * own);
        Profiler oneShort = new Profiler(5, topology + 2 * own - 1);
        oneShort.record(first);
        oneShort.record(second);
        assertThat(oneShort.recentRuns()).containsExactly(second);
        assertThat(oneShort.retainedBytesNow()).isEqualTo(second.estimatedBytes());
        assertThat(oneShort.run(1)).isEmpty();
        assertThat(oneShort.run(2)).contains(second);
    }

    @Test
    void evictingTheLastRunOfAGraphFreesItsTopologyToo() {
        RunProfile a = pairRun(pair("a"), 1, 10, 20);
        RunProfile b = pairRun(pair("b"), 2, 10, 20);
        Profiler one = new Profiler(1);
        one.record(a);
        one.record(b);
        assertThat(one.recentRuns()).containsExactly(b);
        assertThat(one.retainedBytesNow()).isEqualTo(b.estimatedBytes());
    }

    @Test
    void aProfilerTellsItsBoundsAndRefusesNegativeOnes() {
        Profiler p = new Profiler(3, 1000);
        assertThat(p.retainedRuns()).isEqualTo(3);
        assertThat(p.retainedBytes()).isEqualTo(1000);
        assertThat(new Profiler(2).retainedBytes()).isEqualTo(Profiler.DEFAULT_RETAINED_BYTES);
        Profiler keepsNothing = new Profiler(4, 0);
        keepsNothing.record(pairRun(pair("g"), 1, 10, 20));
        assertThat(keepsNothing.recentRuns()).isEmpty();
        assertThat(keepsNothing.notKeptRuns()).isOne();
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new Profiler(-1))
                .withMessage("retained runs must be 0 or more, was -1");
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new Profiler(1, -1))
                .withMessage("retained profile bytes must be 0 or more, was -1");
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .retainedRuns(7)
                .retainedProfileBytes(123_456)
                .build()) {
            assertThat(s.profiler().retainedRuns()).isEqualTo(7);
            assertThat(s.profiler().retainedBytes()).isEqualTo(123_456);
        }
    }

    @Test
    void resetForgetsEveryRunAndTheNextRunCountsItsTopologyAgain() {
        TaskGraph g = pair("g");
        RunProfile first = pairRun(g, 1, 10, 20);
        Profiler p = new Profiler(5, first.estimatedBytes());
        p.record(first);
        TaskGraph big = TaskGraph.named("big");
        big.task("x".repeat(500)).cpu(ctx -> 1);
        p.record(RecordedRun.of(big)
                .runId(2)
                .finished(10, io.hts.engine.graph.RunStatus.SUCCEEDED)
                .profile());
        assertThat(p.notKeptRuns()).isOne();
        assertThat(p.taskStatistics()).containsOnlyKeys("g");
        p.reset();
        assertThat(p.recentRuns()).isEmpty();
        assertThat(p.run(1)).isEmpty();
        assertThat(p.recordedRuns()).isZero();
        assertThat(p.notKeptRuns()).isZero();
        assertThat(p.retainedBytesNow()).isZero();
        assertThat(p.taskStatistics()).isEmpty();
        RunProfile again = pairRun(g, 3, 10, 20);
        p.record(again);
        assertThat(p.recentRuns()).containsExactly(again);
        assertThat(p.retainedBytesNow()).isEqualTo(again.estimatedBytes());
    }

    @Test
    void namesBeyondTheMostWithHistogramsOfTheirOwnAreCountedTogether() {
        TaskGraph g = TaskGraph.named("many");
        for (int i = 0; i <= Profiler.MAX_NAMES; i++) {
            g.task("t" + i).cpu(ctx -> 1);
        }
        RecordedRun run = RecordedRun.of(g);
        for (int i = 0; i <= Profiler.MAX_NAMES; i++) {
            run.ran(i, Device.CPU, 0, i, i + 1);
        }
        RunProfile p = run.finished(Profiler.MAX_NAMES + 1, io.hts.engine.graph.RunStatus.SUCCEEDED)
                .profile();
        Map<String, TaskStatistics> own = p.statistics();
        assertThat(own).hasSize(Profiler.MAX_NAMES + 1).containsKey("t0").containsKey(Profiler.OTHER);
        assertThat(own).doesNotContainKey("t" + Profiler.MAX_NAMES);
        assertThat(own.get(Profiler.OTHER).count()).isOne();
        Profiler profiler = new Profiler(1);
        profiler.record(p);
        Map<String, TaskStatistics> kept = profiler.taskStatistics().get("many");
        assertThat(kept).hasSize(Profiler.MAX_NAMES + 1);
        assertThat(kept.get(Profiler.OTHER).count()).isOne();
    }

    @Test
    void theSlowestTasksOfEveryKeptRunComeLongestFirst() {
        TaskGraph g = pair("g");
        Profiler profiler = new Profiler(5);
        profiler.record(pairRun(g, 1, 100, 300));
        profiler.record(pairRun(g, 2, 200, 50));
        assertThat(profiler.slowestTasks(3))
                .extracting(t -> t.runId() + " " + t.timing().taskName() + " "
                        + t.timing().durationNanos())
                .containsExactly("1 y 300", "2 x 200", "1 x 100");
        assertThat(profiler.slowestTasks(10))
                .hasSize(4)
                .last()
                .satisfies(t -> assertThat(t.timing().durationNanos()).isEqualTo(50));
        assertThat(profiler.slowestTasks(1)).singleElement().satisfies(t -> {
            assertThat(t.graphName()).isEqualTo("g");
            assertThat(t.timing().taskName()).isEqualTo("y");
        });
    }
}
