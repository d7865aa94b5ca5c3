package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.EventType;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Issue 15 item 7: with hts.logging.mdc (on by default) a body runs with hts.run, hts.graph and
 * hts.task in the MDC (logback's, here), on the CPU and on a device, and gives back what it found.
 */
class HtsLogContextTests {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(HtsAutoConfiguration.class));

    private static String keys() {
        return MDC.get("hts.run") + "/" + MDC.get("hts.graph") + "/" + MDC.get("hts.task");
    }

    static final List<String> AFTER_BODY = new CopyOnWriteArrayList<>();

    @Configuration(proxyBeanMethods = false)
    static class Devices {
        @Bean
        DeviceBackend fakeGpu() {
            return new FakeGpuBackend(1);
        }

        @Bean
        TaskListener afterBody() {
            return e -> {
                if (e.type() == EventType.TASK_SUCCEEDED && "parent".equals(e.taskName())) {
                    AFTER_BODY.add(keys()); // on the worker, just after the body: nothing of it is left
                }
            };
        }
    }

    @Test
    void bodiesSeeTheirOwnKeysOnTheCpuAndTheGpuAndNestedRunsGiveThemBack() {
        runner.withUserConfiguration(Devices.class).run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            Map<String, String> seen = new ConcurrentHashMap<>();
            TaskGraph inner = TaskGraph.named("inner");
            inner.task("leaf").cpu(ctx -> {
                seen.put("leaf", keys());
                return 1;
            });
            TaskGraph outer = TaskGraph.named("outer");
            Task<Integer> parent = outer.task("parent").cpu(ctx -> {
                seen.put("parent-before", keys());
                ctx.execute(inner);
                seen.put("parent-after", keys());
                return 2;
            });
            outer.task("device").after(parent).gpu(ctx -> {
                seen.put("device", keys());
                return 3;
            });
            GraphRun run = s.execute(outer);
            String id = Long.toString(run.runId());
            assertThat(seen.get("parent-before")).isEqualTo(id + "/outer/parent");
            assertThat(seen.get("leaf")).endsWith("/inner/leaf").doesNotStartWith(id + "/");
            assertThat(seen.get("parent-after"))
                    .as("given back after the nested run")
                    .isEqualTo(id + "/outer/parent");
            assertThat(seen.get("device")).isEqualTo(id + "/outer/device");
            assertThat(AFTER_BODY).containsOnly("null/null/null");
        });
    }

    @Test
    void theyCanBeTurnedOff() {
        runner.withPropertyValues("hts.logging.mdc=false").run(context -> {
            Scheduler s = context.getBean(Scheduler.class);
            List<String> seen = new CopyOnWriteArrayList<>();
            TaskGraph g = TaskGraph.named("plain");
            g.task("a").cpu(ctx -> seen.add(keys()));
            s.execute(g);
            assertThat(seen).containsExactly("null/null/null");
        });
    }
}
