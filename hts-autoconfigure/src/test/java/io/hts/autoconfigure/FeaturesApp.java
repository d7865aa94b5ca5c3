package io.hts.autoconfigure;

import io.hts.engine.graph.TaskGraph;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** An application of the starter with one graph bean, {@code features} (load, then double), for tests over HTTP. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class FeaturesApp {

    @Bean
    TaskGraph features() {
        TaskGraph g = TaskGraph.named("features");
        var load = g.task("load").cpu(ctx -> 21);
        g.task("double").after(load).cpu(ctx -> ctx.input(load) * 2);
        return g;
    }
}
