package io.hts.autoconfigure;

import com.hazelcast.config.Config;
import io.hts.cluster.LoopbackConfig;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * An application that is a member of an HTS cluster: Spring Boot makes its Hazelcast member from
 * the {@link Config} bean of {@link Member} (127.0.0.1 only, TCP/IP join of the ports in
 * {@code test.cluster.ports}, its own on {@code test.cluster.port}, cluster {@code test.cluster.name}),
 * and it registers the distributed graph {@code squares}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(ClusterApp.Member.class)
public class ClusterApp {

    /** Shards run, by the port of the member that ran them. */
    static final Map<Integer, AtomicInteger> SHARDS = new ConcurrentHashMap<>();

    /** The sum of i * i for i in [0, 40): what {@code squares} totals. */
    static final long TOTAL = 20_540;

    /** The graph {@code squares}: 40 shards in slices of 4, each i * i, and their total. */
    public record Squares(TaskGraph graph, TaskGroup<Long> shards, Task<Long> total) {

        /** The graph, counting the shards this member ran under {@code port}. */
        public static Squares counting(int port) {
            TaskGraph g = TaskGraph.named("squares");
            Task<Long> base = g.task("base").cpu(ctx -> 0L);
            TaskGroup<Long> shards = g.group(
                            "shard",
                            40,
                            (i, t) -> t.after(base).cpu(ctx -> {
                                SHARDS.computeIfAbsent(port, p -> new AtomicInteger())
                                        .incrementAndGet();
                                return ctx.input(base) + (long) i * i;
                            }))
                    .distributed(4);
            Task<Long> total = g.task("total")
                    .after(shards)
                    .cpu(ctx -> ctx.inputs(shards).stream()
                            .mapToLong(Long::longValue)
                            .sum());
            return new Squares(g, shards, total);
        }
    }

    /** The member's Hazelcast configuration and graph, also for ApplicationContextRunner. */
    @Configuration(proxyBeanMethods = false)
    static class Member {

        @Bean
        Config hazelcastConfig(Environment env) {
            List<Integer> ports = Arrays.stream(
                            env.getRequiredProperty("test.cluster.ports").split(","))
                    .map(Integer::valueOf)
                    .toList();
            return LoopbackConfig.member(
                    env.getRequiredProperty("test.cluster.name"),
                    env.getRequiredProperty("test.cluster.port", Integer.class),
                    ports);
        }

        @Bean
        Squares squares(Environment env) {
            return Squares.counting(env.getRequiredProperty("test.cluster.port", Integer.class));
        }

        @Bean
        TaskGraph squaresGraph(Squares squares) {
            return squares.graph();
        }
    }
}
