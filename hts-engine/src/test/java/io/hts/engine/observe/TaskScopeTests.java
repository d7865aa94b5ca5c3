package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Issue 15 item 7: scopes surround every body on its own thread, in order, and one that throws is isolated. */
class TaskScopeTests {

    @Test
    void scopesOpenInOrderAroundEachBodyOnItsThreadAndCloseInReverse() {
        List<String> trace = new CopyOnWriteArrayList<>();
        TaskScope outer = (run, graph, task) -> {
            String thread = Thread.currentThread().getName();
            trace.add("open outer " + graph + "/" + task + " on " + thread);
            return () -> trace.add("close outer " + task + " on "
                    + Thread.currentThread().getName().equals(thread));
        };
        TaskScope inner = (run, graph, task) -> {
            trace.add("open inner " + task);
            return () -> trace.add("close inner " + task);
        };
        try (Scheduler s = Scheduler.builder()
                .threads(1)
                .taskScope(outer)
                .taskScope(inner)
                .gpuBackend(new FakeGpuBackend(1))
                .build()) {
            TaskGraph g = TaskGraph.named("scoped");
            Task<Integer> cpu = g.task("cpu").cpu(ctx -> {
                trace.add("body cpu");
                return 1;
            });
            g.task("gpu").after(cpu).gpu(ctx -> {
                trace.add("body gpu");
                return 2;
            });
            GraphRun run = s.execute(g);
            assertThat(run.isDone()).isTrue();
        }
        assertThat(trace).hasSize(10);
        assertThat(trace.subList(0, 5))
                .satisfiesExactly(
                        l -> assertThat(l).startsWith("open outer scoped/cpu on "),
                        l -> assertThat(l).isEqualTo("open inner cpu"),
                        l -> assertThat(l).isEqualTo("body cpu"),
                        l -> assertThat(l).isEqualTo("close inner cpu"),
                        l -> assertThat(l).isEqualTo("close outer cpu on true"));
        assertThat(trace.subList(5, 10))
                .satisfiesExactly(
                        l -> assertThat(l).startsWith("open outer scoped/gpu on "),
                        l -> assertThat(l).isEqualTo("open inner gpu"),
                        l -> assertThat(l).isEqualTo("body gpu"),
                        l -> assertThat(l).isEqualTo("close inner gpu"),
                        l -> assertThat(l).isEqualTo("close outer gpu on true"));
    }

    @Test
    void aScopeThatThrowsIsSkippedAndTheBodysOutcomeStands() {
        List<String> closed = new CopyOnWriteArrayList<>();
        TaskScope opensBadly = (run, graph, task) -> {
            throw new IllegalStateException("test: open");
        };
        TaskScope closesBadly = (run, graph, task) -> () -> {
            throw new StackOverflowError("test: close");
        };
        TaskScope fine = (run, graph, task) -> () -> closed.add(task);
        try (Scheduler s = Scheduler.builder()
                .threads(2)
                .taskScope(opensBadly)
                .taskScope(closesBadly)
                .taskScope(fine)
                .build()) {
            TaskGraph g = TaskGraph.named("robust");
            Task<Integer> t = g.task("t").cpu(ctx -> 42);
            assertThat(s.execute(g).result(t)).isEqualTo(42);
        }
        assertThat(closed).containsExactly("t");
    }
}
