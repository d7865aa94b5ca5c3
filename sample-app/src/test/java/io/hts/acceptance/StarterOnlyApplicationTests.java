package io.hts.acceptance;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;

/**
 * The acceptance test, in a package of its own (nothing of the sample is scanned) of a module that depends on HTS only through
 * {@code hts-spring-boot-starter} (with Boot's web and Actuator starters): a new application with one
 * graph bean and {@code hts.scheduler.policy=round-robin} runs the graph and shows it under
 * {@code /actuator/hts}, over real HTTP.
 */
@SpringBootTest(
        classes = StarterOnlyApplicationTests.NewApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"hts.scheduler.policy=round-robin", "management.endpoints.web.exposure.include=hts"})
class StarterOnlyApplicationTests {

    /** A new application: nothing of the sample's, only auto-configuration and a graph bean. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class NewApp {

        @Bean
        TaskGraph wordCount() {
            TaskGraph g = TaskGraph.named("word-count");
            var split = g.task("split").cpu(ctx -> "the quick brown fox jumps over the lazy dog".split(" "));
            g.task("count").after(split).cpu(ctx -> ctx.input(split).length);
            return g;
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    Scheduler scheduler;

    @Test
    void aGraphBeanRunsUnderTheRoundRobinPolicyAndShowsUnderActuatorHts() throws Exception {
        TaskGraph graph = scheduler.registeredGraphs().get("word-count");
        assertThat(scheduler.execute(graph).states()).containsEntry("count", TaskState.SUCCEEDED);
        HttpResponse<String> response = LocalHttp.get(port, "/actuator/hts");
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode hts = LocalHttp.json(response);
        assertThat(hts.get("policy").asText()).isEqualTo("round-robin");
        assertThat(hts.get("graphs").get("word-count").get("tasks").asInt()).isEqualTo(2);
        assertThat(hts.get("pool").get("executed").asLong()).isGreaterThanOrEqualTo(2);
    }
}
