package io.hts.engine.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.ReadyOrder;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.SystemStatus;
import io.hts.engine.policy.TaskInfo;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.GraphRunException;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.Blocking;
import io.hts.engine.support.ScriptedBackend;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class PolicyAndDispatchBreakTests {

    static final Duration MAX = Duration.ofSeconds(15);

    static void closeQuietly(Scheduler s) throws InterruptedException {
        s.shutdownNow();
        s.awaitTermination(Duration.ofSeconds(3));
    }

    /** A policy that throws what the supplier gives from selectDevice. */
    static SchedulingPolicy throwingPolicy(Supplier<Throwable> what, boolean fromReadyOrder) {
        return new SchedulingPolicy() {
            @Override
            public String name() {
                return "throwing";
            }

            @Override
            public Device selectDevice(TaskInfo task, SystemStatus status) {
                Throwable t = what.get();
                if (t instanceof RuntimeException r) {
                    throw r;
                }
                throw (Error) t;
            }

            @Override
            public ReadyOrder readyOrder() {
                if (fromReadyOrder) {
                    Throwable t = what.get();
                    if (t instanceof RuntimeException r) {
                        throw r;
                    }
                    throw (Error) t;
                }
                return ReadyOrder.PRIORITY;
            }
        };
    }

    @Test
    void aPolicyThatThrowsAnErrorSendsTheTaskToTheCpu() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(ScriptedBackend.wellBehaved())
                    .policy(throwingPolicy(() -> new AssertionError("policy assertion"), false))
                    .build();
            try {
                TaskGraph g = TaskGraph.named("policy-error");
                Task<Integer> root = g.task("root").cpu(ctx -> 1);
                Task<Integer> dual = g.task("dual").after(root).bodies(ctx -> 2, ctx -> 2);
                GraphRun run = s.submit(g);
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.result(dual)).isEqualTo(2);
                assertThat(s.policyFailures()).isPositive();
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aPolicyWhoseReadyOrderThrowsDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .policy(throwingPolicy(() -> new IllegalStateException("readyOrder exploded"), true))
                    .build();
            try {
                TaskGraph g = TaskGraph.named("readyorder");
                Task<Integer> root = g.task("root").cpu(ctx -> 1);
                Task<Integer> next = g.task("next").after(root).cpu(ctx -> 2);
                GraphRun run;
                try {
                    run = s.submit(g);
                } catch (RuntimeException ex) {
                    assertThat(s.activeRuns())
                            .as("a refused submission leaves no active run")
                            .isEmpty();
                    return;
                }
                Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aDispatchThatThrowsAnErrorForANonRootTaskDoesNotHangTheRun() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                throw new AssertionError("dispatch assertion");
            });
            b.inline = true;
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                TaskGraph g = TaskGraph.named("dispatch-error-nonroot");
                Task<Integer> root = g.task("root").cpu(ctx -> 1);
                Task<Integer> gpu = g.task("gpu").after(root).gpu(ctx -> 2);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                assertThat(ex).isNotNull();
                Checks.assertConsistent(run);
                assertThat(run.state(gpu)).isEqualTo(TaskState.FAILED);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aDispatchThatThrowsAnErrorForARootLeavesNoRunBehind() {
        assertTimeoutPreemptively(MAX, () -> {
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> {
                throw new AssertionError("dispatch assertion");
            });
            b.inline = true;
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                TaskGraph g = TaskGraph.named("dispatch-error-root");
                Task<Integer> gpu = g.task("gpu").gpu(ctx -> 2);
                GraphRun run = s.submit(g);
                GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                Checks.assertConsistent(run);
                assertThat(run.state(gpu)).isEqualTo(TaskState.FAILED);
                assertThat(ex).isNotNull();
                assertThat(ex.getCause()).isInstanceOf(AssertionError.class).hasMessage("dispatch assertion");
                assertThat(s.activeRuns()).isEmpty();
            } finally {
                s.shutdown();
                assertThat(s.awaitTermination(Duration.ofSeconds(3)))
                        .as("terminated after shutdown()")
                        .isTrue();
            }
        });
    }

    @Test
    void cancellingARunWhoseDeviceTaskIsQueuedButNeverStartedEndsIt() {
        assertTimeoutPreemptively(MAX, () -> {
            CountDownLatch dispatched = new CountDownLatch(1);
            ScriptedBackend b = new ScriptedBackend(2, (be, t) -> dispatched.countDown());
            Scheduler s = Scheduler.builder().threads(2).gpuBackend(b).build();
            try {
                TaskGraph g = TaskGraph.named("queued-cancel");
                Task<Integer> gpu = g.task("gpu").gpu(ctx -> 2);
                GraphRun run = s.submit(g);
                assertThat(dispatched.await(5, TimeUnit.SECONDS)).isTrue();
                assertThat(run.cancel()).isTrue();
                Checks.awaitEnd(run, Duration.ofSeconds(3));
                Checks.assertConsistent(run);
            } finally {
                closeQuietly(s);
            }
        });
    }

    @Test
    void aWellBehavedEnqueuingBackendWhosePredecessorFailsGetsItsSuccessorsCancelled() {
        assertTimeoutPreemptively(MAX, () -> {
            Map<DeviceTask, CompletableFuture<Boolean>> done = new ConcurrentHashMap<>();
            ScriptedBackend b = new ScriptedBackend(4, (be, t) -> {
                CompletableFuture<Boolean> mine = done.computeIfAbsent(t, k -> new CompletableFuture<>());
                if (!t.start(0)) {
                    mine.complete(false);
                    return;
                }
                Object out = ScriptedBackend.runBody(be, t);
                t.enqueued(out);
                boolean predsOk = true;
                for (DeviceTask p : t.awaitOnDevice()) {
                    predsOk &= done.computeIfAbsent(p, k -> new CompletableFuture<>())
                            .join();
                }
                if (t.taskName().equals("a")) {
                    try {
                        Blocking.untilInterrupted(Duration.ofMillis(20));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    be.fail(t, new IllegalStateException("kernel fault"));
                    mine.complete(false);
                    return;
                }
                if (predsOk) {
                    be.report(t, out);
                } else {
                    be.fail(t, new IllegalStateException("predecessor failed on the device"));
                }
                mine.complete(predsOk);
            });
            Scheduler s = Scheduler.builder()
                    .threads(2)
                    .gpuBackend(b)
                    .policy(new GpuFirstPolicy())
                    .build();
            try {
                for (int k = 0; k < 20; k++) {
                    TaskGraph g = TaskGraph.named("enq-ok-" + k);
                    Task<Integer> a = g.task("a").gpu(ctx -> 1);
                    Task<Integer> c = g.task("c").after(a).gpu(ctx -> 2);
                    Task<Integer> d = g.task("d").after(c).gpu(ctx -> 3);
                    GraphRun run = s.submit(g);
                    GraphRunException ex = Checks.awaitEnd(run, Duration.ofSeconds(5));
                    assertThat(ex).isNotNull();
                    Checks.assertConsistent(run);
                    assertThat(run.state(a)).isEqualTo(TaskState.FAILED);
                    assertThat(run.state(c)).isEqualTo(TaskState.CANCELLED);
                    assertThat(run.state(d)).isEqualTo(TaskState.CANCELLED);
                    assertThat(ex.getCause()).hasMessage("kernel fault");
                    assertThat(run.failures()).hasSize(1);
                }
            } finally {
                closeQuietly(s);
            }
        });
    }
}
