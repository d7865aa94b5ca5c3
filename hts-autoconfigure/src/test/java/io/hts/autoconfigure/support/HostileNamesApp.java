package io.hts.autoconfigure.support;

import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * An application whose graphs a user could well register and that the dashboard and the endpoints
 * must survive: names with HTML and quotes in them, a graph of no task, and a graph of a GPU-only
 * task on a scheduler without a GPU (its run cannot start).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class HostileNamesApp {

    /** A task name that is HTML: rendered as HTML, it would run a script that sets {@code window.hts_xss}. */
    public static final String HTML_TASK = "<img src=x onerror=\"window.hts_xss=1\">";

    /** The graph of the task whose name is HTML. */
    public static final String HTML_GRAPH =
            "<b onmouseover=\"window.hts_xss=2\">g</b> \"quoted\" & 'more' \u00e9\u4e2d\ud83d\ude00";

    @Bean
    TaskGraph hostile() {
        TaskGraph g = TaskGraph.named(HTML_GRAPH);
        Task<Integer> first = g.task(HTML_TASK).cpu(ctx -> 1);
        g.task("x".repeat(300)).after(first).cpu(ctx -> ctx.input(first) + 1);
        return g;
    }

    @Bean
    TaskGraph empty() {
        return TaskGraph.named("empty");
    }

    @Bean
    TaskGraph needsGpu() {
        TaskGraph g = TaskGraph.named("needs-gpu");
        g.task("kernel").gpu(ctx -> 1);
        return g;
    }
}
