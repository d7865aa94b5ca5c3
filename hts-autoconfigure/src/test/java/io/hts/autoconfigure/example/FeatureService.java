package io.hts.autoconfigure.example;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.concurrent.CompletableFuture;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.stereotype.Service;

// Shown in docs/getting-started.md as written (DocExamples compares them): not reformatted.
// spotless:off
/** The service of docs/getting-started.md: runs the two graphs and reads their results. */
@Service
public class FeatureService {

    private final Scheduler scheduler;
    private final TaskGraph features;
    private final TaskGraph report;

    public FeatureService(Scheduler scheduler,
                          @Qualifier("features") TaskGraph features,
                          @Qualifier("report") TaskGraph report) {
        this.scheduler = scheduler;
        this.features = features;
        this.report = report;
    }

    /** Runs "features" and waits for its end: the work is done on HTS's threads. */
    public double mean() {
        GraphRun run = scheduler.execute(features);
        return (Double) run.result(features.find("mean").orElseThrow());
    }

    /** Starts "report" and returns at once; the future completes when the run has. */
    public CompletableFuture<String> report() {
        GraphRun run = scheduler.submit(report);
        return run.future().thenApply(done -> (String) done.result(report.find("summary").orElseThrow()));
    }
}
// spotless:on
