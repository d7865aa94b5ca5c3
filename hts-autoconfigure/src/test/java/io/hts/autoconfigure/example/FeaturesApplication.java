package io.hts.autoconfigure.example;

import io.hts.autoconfigure.SchedulerBuilderCustomizer;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.Random;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

// Shown in docs/getting-started.md and docs/configuration.md as written (DocExamples compares them): not reformatted.
// spotless:off
/**
 * The Spring Boot application of docs/getting-started.md: a graph bean, {@code @HtsTask} methods
 * ({@link Reports}), a service that runs both ({@link FeatureService}) and a customizer (also in
 * docs/configuration.md). {@code DocExamples} checks that the pages show it as written;
 * {@code GettingStartedTests} starts it and calls its Actuator endpoints.
 */
@SpringBootApplication
public class FeaturesApplication {

    public static void main(String[] args) {
        SpringApplication.run(FeaturesApplication.class, args);
    }

    /** One million numbers, the sum of each of eight shards, and their mean. */
    @Bean
    TaskGraph features() {
        TaskGraph graph = TaskGraph.named("features");
        Task<double[]> load = graph.task("load").cpu(ctx -> new Random(42).doubles(1_000_000).toArray());
        TaskGroup<Double> sums = graph.group("sum", 8, (i, t) -> t.after(load)
                .cpu(ctx -> sum(ctx.input(load), i, 8)));
        graph.task("mean").after(sums)
                .cpu(ctx -> ctx.inputs(sums).stream().mapToDouble(Double::doubleValue).sum() / 1_000_000);
        return graph;
    }

    /** Keeps the last 100 runs' profiles, and logs each run's end. */
    @Bean
    SchedulerBuilderCustomizer keepMoreRuns() {
        return builder -> builder.retainedRuns(100).listener(new AuditListener());
    }

    /** The sum of every {@code n}-th value from the {@code i}-th. */
    static double sum(double[] values, int i, int n) {
        double sum = 0;
        for (int k = i; k < values.length; k += n) {
            sum += values[k];
        }
        return sum;
    }
}
// spotless:on
