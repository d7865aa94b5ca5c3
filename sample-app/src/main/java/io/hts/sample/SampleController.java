package io.hts.sample;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/** {@code POST /sample/run/{graph}}: submits a registered graph (the dashboard's buttons). */
@RestController
public class SampleController {

    private final Scheduler scheduler;

    SampleController(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * Submits a run; it goes on in the background.
     *
     * @param graph a registered graph's name
     * @return the run's id
     */
    @PostMapping("/sample/run/{graph}")
    public Map<String, Object> run(@PathVariable String graph) {
        TaskGraph g = scheduler.registeredGraphs().get(graph);
        if (g == null) {
            throw new ResponseStatusException(
                    HttpStatus.NOT_FOUND,
                    "no graph '" + graph + "'; registered: "
                            + scheduler.registeredGraphs().keySet());
        }
        GraphRun run = scheduler.submit(g);
        return Map.of("runId", run.runId(), "graph", graph);
    }
}
