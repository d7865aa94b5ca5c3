package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Distributed groups through the engine's public API, over the in-memory {@link LoopbackCluster}:
 * results equal a run on one scheduler, lost members, refusals, remote failures, cancel, time-outs,
 * payloads by reference.
 */
class ClusterSchedulingTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final LoopbackCluster cluster = new LoopbackCluster();
    private final List<Scheduler> schedulers = new ArrayList<>();

    @AfterEach
    void close() {
        schedulers.forEach(Scheduler::shutdownNow);
        schedulers.forEach(Scheduler::close);
        cluster.close();
    }

    private Scheduler member(LoopbackCluster.Member engine, ClusterSettings settings, Supplier<Sweeps> graph) {
        Scheduler s = Scheduler.builder().threads(2).cluster(engine, settings).build();
        schedulers.add(s);
        if (graph != null) {
            s.register(graph.get().graph);
        }
        return s;
    }

    private Scheduler member(LoopbackCluster.Member engine, Supplier<Sweeps> graph) {
        return member(engine, ClusterSettings.defaults(), graph);
    }

    private final List<LoopbackCluster.Member> members = new ArrayList<>();

    /** Members a, b and c with the sweep of 24 shards in slices of 4; the coordinator a's scheduler. */
    private Scheduler threeMembers() {
        List<Scheduler> built = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            LoopbackCluster.Member m = cluster.member(id);
            members.add(m);
            built.add(member(m, () -> Sweeps.of(24, 4)));
        }
        return built.get(0);
    }

    @Test
    void aSweepOverThreeMembersEqualsARunOnOneScheduler() {
        Scheduler coordinator = threeMembers();
        var a = members.get(0);
        var b = members.get(1);
        var c = members.get(2);
        Sweeps sweep = Sweeps.of(24, 4);

        GraphRun run = coordinator.submit(sweep.graph).await();

        assertThat(run.results(sweep.shards)).isEqualTo(Sweeps.expected(24, 10_000));
        assertThat(run.result(sweep.sum))
                .isEqualTo(Sweeps.expected(24, 10_000).stream()
                        .mapToLong(Long::longValue)
                        .sum());
        assertThat(run.results(sweep.checks)).containsExactly(276L, 277L); // 0 + 1 + ... + 23, plus the index
        assertThat(b.served()).isPositive();
        assertThat(c.served()).isPositive();
        assertThat(b.received())
                .filteredOn(w -> w.group().equals("shard"))
                .isNotEmpty()
                .allSatisfy(w -> {
                    assertThat(w.graph()).isEqualTo("sweep");
                    assertThat(w.fingerprint()).isEqualTo(GraphFingerprint.of(sweep.graph));
                    assertThat(w.coordinator()).isEqualTo("a");
                    assertThat(w.timeLimit()).isNotNull().isLessThanOrEqualTo(Duration.ofSeconds(30));
                });
        assertThat(coordinator.cluster()).containsSame(a);
    }

    /**
     * A coordinator's own slices running on another member do not count against that member when
     * the coordinator places its next run: a and b each run two of its held slices (so b's load is
     * a's alone), and its next run of eight slices goes half to b, not mostly to a.
     */
    @Test
    void aCoordinatorsOwnSlicesElsewhereDoNotPushItsNextRunOntoItself() throws Exception {
        CountDownLatch entered = new CountDownLatch(4);
        CountDownLatch release = new CountDownLatch(1);
        Supplier<TaskGraph> held = () -> {
            TaskGraph g = TaskGraph.named("held");
            g.group(
                            "part",
                            4,
                            (i, t) -> t.cpu(ctx -> {
                                entered.countDown();
                                return release.await(30, TimeUnit.SECONDS) ? i : -1;
                            }))
                    .distributed(1);
            return g;
        };
        Supplier<TaskGraph> quick = () -> {
            TaskGraph g = TaskGraph.named("quick");
            g.group("part", 8, (i, t) -> t.cpu(ctx -> i)).distributed(1);
            return g;
        };
        LoopbackCluster.Member a = cluster.member("a");
        LoopbackCluster.Member b = cluster.member("b");
        Scheduler coordinator = null;
        for (LoopbackCluster.Member m : List.of(a, b)) {
            Scheduler s = Scheduler.builder().threads(4).cluster(m).build(); // every held slice runs, however split
            schedulers.add(s);
            s.register(held.get());
            s.register(quick.get());
            coordinator = coordinator == null ? s : coordinator;
        }
        TaskGraph first = held.get();
        GraphRun busy = coordinator.submit(first);
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(b.localMember().loadByCoordinator()).containsOnlyKeys("a");
        assertThat(b.localMember().load()).isPositive();

        TaskGraph next = quick.get();
        GraphRun run = coordinator.submit(next);
        await().atMost(WAIT)
                .until(() -> b.received().stream()
                                .filter(w -> w.graph().equals("quick"))
                                .count()
                        >= 4);
        release.countDown();

        assertThat(busy.await().status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(run.await().status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(b.received()).filteredOn(w -> w.graph().equals("quick")).hasSize(4);
    }

    /** A member whose scheduler is shut down is listed DOWN at once, and gets no slices; the runs end right. */
    @Test
    void aMemberWhoseSchedulerIsShutDownIsListedDownAndGetsNoSlices() {
        Scheduler coordinator = threeMembers();
        var b = members.get(1);
        var c = members.get(2);
        Sweeps sweep = Sweeps.of(24, 4);

        schedulers.get(1).shutdown();

        assertThat(b.localMember().health()).isEqualTo(DeviceHealth.DOWN);
        assertThat(members.get(0).members())
                .filteredOn(m -> m.id().equals("b"))
                .singleElement()
                .extracting(ClusterMember::health)
                .isEqualTo(DeviceHealth.DOWN);
        GraphRun run = coordinator.submit(sweep.graph).await();
        assertThat(run.results(sweep.shards)).isEqualTo(Sweeps.expected(24, 10_000));
        assertThat(b.received()).isEmpty();
        assertThat(c.received()).isNotEmpty();
    }

    @Test
    void theSlicesOfALostMemberRunElsewhereAndEveryShardCountsOnce() {
        Scheduler coordinator = threeMembers();
        var a = members.get(0);
        var b = members.get(1);
        var c = members.get(2);
        b.hold(w -> w.group().equals("shard"));
        Sweeps sweep = Sweeps.of(24, 4);

        GraphRun run = coordinator.submit(sweep.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        b.lose();

        assertThat(run.await().results(sweep.shards)).isEqualTo(Sweeps.expected(24, 10_000));
        assertThat(b.served()).isZero();
        List<SliceWork> resent = new ArrayList<>(a.received());
        resent.addAll(c.received());
        // each slice b held went again, as a later delivery, to another member
        assertThat(b.received())
                .isNotEmpty()
                .allSatisfy(held -> assertThat(resent).anySatisfy(w -> {
                    assertThat(w.from()).isEqualTo(held.from());
                    assertThat(w.to()).isEqualTo(held.to());
                    assertThat(w.attempt()).isGreaterThan(held.attempt());
                }));
        assertThat(resent.stream().map(w -> w.attempt()).distinct()).hasSize(resent.size());
    }

    @Test
    void aSliceWithNoMemberLeftFailsItsTasksNamingTheLostMembers() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, ClusterSettings.defaults().withSliceAttempts(1), () -> Sweeps.of(8, 4));
        member(b, () -> Sweeps.of(8, 4));
        b.hold(w -> true);
        Sweeps sweep = Sweeps.of(8, 4);

        GraphRun run = coordinator.submit(sweep.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        b.lose();

        assertThatThrownBy(run::await)
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(MemberLostException.class)
                .hasMessageContaining("group 'shard' of graph 'sweep'")
                .hasMessageContaining("[b]")
                .hasMessageContaining("no member left");
    }

    @Test
    void aMemberWithoutTheGraphRefusesItNamingGraphAndMember() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.of(8, 1));
        member(b, null);
        Sweeps sweep = Sweeps.of(8, 1);

        assertThatThrownBy(() -> coordinator.execute(sweep.graph))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(GraphRefusedException.class)
                .hasMessageContaining("graph 'sweep' is not registered on member loopback/b")
                .hasMessageContaining("which registers []")
                .satisfies(
                        ex -> assertThat(((GraphRefusedException) ex).member()).contains("loopback/b"));
    }

    @Test
    void aMemberWithAnotherVersionOfTheGraphRefusesIt() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.of(8, 1));
        member(b, () -> Sweeps.of(9, 1)); // one shard more: another fingerprint
        Sweeps sweep = Sweeps.of(8, 1);

        assertThatThrownBy(() -> coordinator.execute(sweep.graph))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(GraphRefusedException.class)
                .hasMessageContaining("graph 'sweep' on member loopback/b (b) has fingerprint "
                        + GraphFingerprint.of(Sweeps.of(9, 1).graph))
                .hasMessageContaining("coordinator a sent " + GraphFingerprint.of(sweep.graph))
                .hasMessageContaining("different versions");
    }

    @Test
    void aBodyFailingOnAnotherMemberFailsItsTaskNamingTaskAndMember() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.of(8, 2));
        member(b, () -> Sweeps.failing(8, 2));
        Sweeps sweep = Sweeps.of(8, 2);

        GraphRunException ex = org.junit.jupiter.api.Assertions.assertThrows(
                GraphRunException.class, () -> coordinator.execute(sweep.graph));

        assertThat(ex.getCause())
                .isInstanceOf(RemoteTaskException.class)
                .hasMessageMatching("task 'shard\\[\\d]' failed on member loopback/b \\(b\\): "
                        + "java.lang.IllegalStateException: shard \\d has no data here");
        assertThat(((RemoteTaskException) ex.getCause()).remoteStackTrace()).contains("Sweeps");
    }

    @Test
    void cancellingTheRunCancelsTheSlicesInFlight() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.of(8, 2));
        member(b, () -> Sweeps.of(8, 2));
        b.hold(w -> true);
        Sweeps sweep = Sweeps.of(8, 2);

        GraphRun run = coordinator.submit(sweep.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        run.cancel();

        assertThatThrownBy(run::await).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(run.states().values()).doesNotContain(TaskState.RUNNING);
    }

    @Test
    void aSliceThatOutlivesItsMembersTimeLimitFailsThemWithATimeOut() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.timed(8, 2, Duration.ofMillis(300)));
        member(b, () -> Sweeps.timed(8, 2, Duration.ofMillis(300)));
        b.hold(w -> true);
        Sweeps sweep = Sweeps.timed(8, 2, Duration.ofMillis(300));

        GraphRun run = coordinator.submit(sweep.graph);

        assertThatThrownBy(run::await)
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(TimeoutException.class);
        assertThat(b.received()).allSatisfy(w -> assertThat(w.timeLimit()).isLessThanOrEqualTo(Duration.ofMillis(300)));
        b.release();
    }

    @Test
    void largeInputsAndResultsTravelByReferenceAndAreDeletedAfterTheRun() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        ClusterSettings byReference = ClusterSettings.defaults().withInlineBytes(0);
        Scheduler coordinator = member(a, byReference, () -> Sweeps.large(8, 2));
        member(b, byReference, () -> Sweeps.large(8, 2));
        Sweeps sweep = Sweeps.large(8, 2);

        GraphRun run = coordinator.execute(sweep.graph);

        assertThat(run.results(sweep.shards)).isEqualTo(Sweeps.expected(8, 100_000));
        assertThat(b.received())
                .anySatisfy(w -> assertThat(w.inputs().get("load").reference()).isNotNull());
        await().atMost(WAIT).until(() -> cluster.stored().isEmpty());
    }

    @Test
    void aResultTheCodecCannotEncodeFailsWithTheClassNamed() {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("opaque");
            g.group("part", 4, (i, t) -> t.cpu(ctx -> new Object())).distributed(1);
            return g;
        };
        Scheduler coordinator = Scheduler.builder().threads(2).cluster(a).build();
        Scheduler worker = Scheduler.builder().threads(2).cluster(b).build();
        schedulers.add(coordinator);
        schedulers.add(worker);
        worker.register(graph.get());

        assertThatThrownBy(() -> coordinator.execute(graph.get()))
                .isInstanceOf(GraphRunException.class)
                .cause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.Object cannot be sent to another member: it is not Serializable");
    }

    @Test
    void aRunThatFailsFastStopsItsSlicesOnOtherMembersInsteadOfWaitingForThem() throws Exception {
        CountDownLatch fail = new CountDownLatch(1);
        Supplier<TaskGraph> graph = () -> {
            TaskGraph g = TaskGraph.named("fails-fast");
            g.group("shard", 8, (i, t) -> t.cpu(ctx -> i)).distributed(1);
            g.task("boom").cpu(ctx -> {
                fail.await(20, TimeUnit.SECONDS);
                throw new IllegalStateException("boom");
            });
            return g;
        };
        var a = cluster.member("a");
        var c = cluster.member("c");
        Scheduler coordinator = Scheduler.builder().threads(2).cluster(a).build();
        Scheduler worker = Scheduler.builder().threads(2).cluster(c).build();
        schedulers.add(coordinator);
        schedulers.add(worker);
        worker.register(graph.get());
        c.hold(w -> true); // c never answers
        TaskGraph g = graph.get();

        GraphRun run = coordinator.submit(g);
        await().atMost(WAIT).until(() -> c.holding() > 0);
        fail.countDown();

        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.states().values()).allMatch(TaskState::isTerminal);
        assertThat(c.holding()).isPositive(); // the run ended without their answer
        assertThat(run.error(g.find("boom").orElseThrow())).get().asString().contains("boom");
    }

    @Test
    void cancellingAMemberRunningElsewhereEndsItNowAndItsSliceGoesOn() throws Exception {
        var a = cluster.member("a");
        var b = cluster.member("b");
        Scheduler coordinator = member(a, () -> Sweeps.of(8, 4));
        member(b, () -> Sweeps.of(8, 4));
        b.hold(w -> w.group().equals("shard")); // b's slice waits there
        Sweeps sweep = Sweeps.of(8, 4);

        GraphRun run = coordinator.submit(sweep.graph);
        await().atMost(WAIT).until(() -> b.holding() > 0);
        int from = b.received().get(0).from();
        var cancelled = sweep.shards.get(from);
        assertThat(run.state(cancelled)).isEqualTo(TaskState.RUNNING);

        assertThat(run.cancel(cancelled)).isTrue();

        await().atMost(WAIT).until(() -> run.state(cancelled) == TaskState.CANCELLED);
        assertThat(b.holding()).isPositive(); // it did not wait for the slice's answer
        b.release();
        assertThatThrownBy(() -> run.await(WAIT)).isInstanceOf(GraphRunException.class);
        for (int k = from + 1; k < from + 4; k++) { // the slice's other members kept their results
            assertThat(run.state(sweep.shards.get(k))).isEqualTo(TaskState.SUCCEEDED);
            assertThat(run.result(sweep.shards.get(k)))
                    .isEqualTo(Sweeps.expected(8, 10_000).get(k));
        }
        assertThat(run.state(sweep.sum)).isEqualTo(TaskState.CANCELLED);
    }

    @Test
    void theProfileShowsWhichMembersRanOnAnotherMemberAndTheTraceGivesThemTheirOwnRow() {
        Scheduler coordinator = threeMembers();
        var b = members.get(1);
        var c = members.get(2);
        Sweeps sweep = Sweeps.of(24, 4);

        GraphRun run = coordinator.execute(sweep.graph);

        Set<Integer> sentAway = new HashSet<>();
        for (SliceWork w : concat(b.received(), c.received())) {
            if (w.group().equals("shard")) {
                for (int k = w.from(); k < w.to(); k++) {
                    sentAway.add(k);
                }
            }
        }
        assertThat(sentAway).isNotEmpty().hasSizeLessThan(24); // some here, some there
        RunProfile profile = coordinator.profiler().run(run.runId()).orElseThrow();
        for (int k = 0; k < 24; k++) {
            TaskTiming t = profile.timing(sweep.shards.get(k).index());
            assertThat(t.remote()).as("shard " + k).isEqualTo(sentAway.contains(k));
            assertThat(t.lane()).isEqualTo(sentAway.contains(k) ? TaskTiming.REMOTE_LANE : t.lane());
            assertThat(t.ran()).isTrue();
        }
        assertThat(profile.toChromeTrace()).contains("Other members (sweep)", "slices sent away");
        assertThat(profile.workers().stream().mapToLong(w -> w.tasks()).sum())
                .isLessThan(profile.tasks().size());
    }

    private static List<SliceWork> concat(List<SliceWork> x, List<SliceWork> y) {
        List<SliceWork> out = new ArrayList<>(x);
        out.addAll(y);
        return out;
    }

    @Test
    void withoutAClusterADistributedGroupRunsWhereItIs() {
        Sweeps sweep = Sweeps.of(6, 2);
        try (Scheduler alone = Scheduler.builder().threads(2).build()) {
            assertThat(alone.execute(sweep.graph).results(sweep.shards)).isEqualTo(Sweeps.expected(6, 10_000));
            assertThat(alone.cluster()).isEmpty();
        }
    }

    /**
     * A slice is sent once all its members are ready: members that depend on one another, directly
     * or through a task outside the group, would wait for their own slice, so the graph is refused
     * at submission (and by validate), naming both members; nothing hangs.
     */
    @Test
    void membersOfADistributedGroupThatDependOnOneAnotherAreRefusedNamingBoth() {
        Scheduler coordinator = member(cluster.member("a"), null);
        for (boolean direct : new boolean[] {true, false}) {
            TaskGraph g = TaskGraph.named(direct ? "direct" : "through");
            var shards = g.group("shard", 4, (i, t) -> t.cpu(ctx -> i)).distributed(2);
            if (direct) {
                shards.get(3).after(shards.get(1));
            } else {
                var between = g.task("between").after(shards.get(0)).cpu(ctx -> 0);
                shards.get(2).after(between);
            }
            String member = direct ? "shard[3]" : "shard[2]";
            String other = direct ? "shard[1]" : "shard[0]";
            assertThatThrownBy(() -> coordinator.validate(g))
                    .isInstanceOf(GraphValidationException.class)
                    .hasMessageContaining("'" + member + "' depends on '" + other + "'")
                    .hasMessageContaining("same distributed group");
            assertThatThrownBy(() -> coordinator.submit(g)).isInstanceOf(GraphValidationException.class);
            assertThat(coordinator.activeRuns()).isEmpty();
        }
        TaskGraph apart = TaskGraph.named("apart");
        var first = apart.group("first", 4, (i, t) -> t.cpu(ctx -> i)).distributed(2);
        var second =
                apart.group("second", 4, (i, t) -> t.after(first).cpu(ctx -> i)).distributed(2);
        assertThat(coordinator.submit(apart).await().results(second))
                .as("a distributed group after another is fine")
                .containsExactly(0, 1, 2, 3);
    }
}
