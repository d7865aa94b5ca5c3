package io.hts.autoconfigure.example;

import io.hts.autoconfigure.annotation.HtsTask;
import io.hts.engine.graph.TaskContext;
import java.util.List;
import org.springframework.stereotype.Component;

// Shown in docs/getting-started.md as written (DocExamples compares them): not reformatted.
// spotless:off
/** The {@code @HtsTask} methods of docs/getting-started.md: they make up the graph bean "report". */
@Component
public class Reports {

    @HtsTask(graph = "report")
    List<String> requests() {
        return List.of("GET /a 200", "GET /b 500", "POST /a 200", "GET /c 404");
    }

    @HtsTask(graph = "report", after = "requests", retries = 2, timeout = "5s")
    long errors(List<String> requests) {
        return requests.stream().filter(r -> !r.endsWith(" 200")).count();
    }

    @HtsTask(graph = "report", after = {"requests", "errors"})
    String summary(List<String> requests, long errors, TaskContext ctx) {
        return ctx.graphName() + ": " + errors + " errors in " + requests.size() + " requests";
    }
}
// spotless:on
