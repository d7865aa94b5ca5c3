package io.hts.sample;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import java.util.List;

/**
 * One of the sample's scenarios: a graph (a {@code TaskGraph} bean, so the Actuator endpoints and
 * the dashboard see it) and how its run reads in the summary. The graph's last task checks the
 * result and fails the run when the check fails; {@link #results} only reads a run that succeeded.
 * Scenarios run in their {@code @Order}.
 */
public interface SampleScenario {

    /** The block's label, e.g. {@code (a) features}. */
    String label();

    /** What runs and its size, in one line. */
    String description();

    /** The graph to run. */
    TaskGraph graph();

    /**
     * The key results and their checks, a few lines, for a run that succeeded.
     *
     * @param run the run
     * @return lines of at most about 100 characters
     */
    List<String> results(GraphRun run);
}
