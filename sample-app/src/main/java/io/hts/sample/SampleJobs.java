package io.hts.sample;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.observe.Elapsed;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.TaskFailure;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;

/**
 * Runs the scenarios once at start-up ({@code sample.run-jobs}), one after the other on the
 * auto-configured scheduler, with a progress line every second for a run past two seconds; then
 * prints the summary, one block per scenario (what ran and its size, status and makespan, the key
 * results and their checks, efficiency and the scheduler's overhead), and exits unless {@code
 * sample.keep-running}. A scenario whose run fails is reported as such and fails the application
 * after the summary.
 */
@Component
public class SampleJobs implements ApplicationRunner {

    private static final int MESSAGE_LIMIT = 300;

    private final Scheduler scheduler;
    private final SampleProperties properties;
    private final List<SampleScenario> scenarios;
    private final ConfigurableApplicationContext context;
    private final PrintStream out = System.out;

    SampleJobs(
            Scheduler scheduler,
            SampleProperties properties,
            List<SampleScenario> scenarios,
            ConfigurableApplicationContext context) {
        this.scheduler = scheduler;
        this.properties = properties;
        this.scenarios = scenarios;
        this.context = context;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (!properties.runJobs()) {
            return;
        }
        RunProgress progress = new RunProgress(out, Duration.ofSeconds(2), Duration.ofSeconds(1));
        List<String> summary = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        long start = System.nanoTime();
        out.println("HTS sample: " + machine());
        for (int i = 0; i < scenarios.size(); i++) {
            SampleScenario s = scenarios.get(i);
            out.println(Format.of("  [%d/%d] %s: %s", i + 1, scenarios.size(), s.label(), s.description()));
            GraphRun run = progress.run(scheduler, s.graph());
            summary.addAll(block(s, run));
            if (run.status() != RunStatus.SUCCEEDED) {
                failed.add(s.label());
            }
        }
        out.println();
        out.println("==== HTS sample: summary " + "=".repeat(70));
        out.println(machine());
        summary.forEach(out::println);
        out.println(Format.of(
                "==== %d of %d scenarios passed their checks in %s",
                scenarios.size() - failed.size(),
                scenarios.size(),
                Elapsed.of(Duration.ofNanos(System.nanoTime() - start))));
        if (!failed.isEmpty()) {
            throw new IllegalStateException("scenarios failed: " + String.join(", ", failed) + " (see the summary)");
        }
        if (!properties.keepRunning()) {
            SpringApplication.exit(context, () -> 0);
        }
    }

    /** Workers, policy and GPU in a line. */
    private String machine() {
        String gpu = scheduler
                .systemStatus()
                .find(Device.GPU)
                .map(DeviceStatus::detail)
                .orElse("none (CPU only)");
        return Format.of(
                "%d CPU workers, policy %s; GPU: %s",
                scheduler.parallelism(), scheduler.policy().name(), gpu);
    }

    /** A scenario's block: its label, status and makespan; its size; its results or failures; its figures. */
    static List<String> block(SampleScenario s, GraphRun run) {
        RunFigures f = RunFigures.of(run.profile());
        List<String> lines = new ArrayList<>();
        lines.add(Format.of(
                "%s: %s in %s, %s tasks",
                s.label(),
                run.status(),
                Elapsed.of(f.makespan()),
                Format.count(run.graph().size())));
        lines.add("    " + s.description());
        if (run.status() == RunStatus.SUCCEEDED) {
            s.results(run).forEach(l -> lines.add("    " + l));
            lines.add("    " + f.line());
        } else {
            for (TaskFailure failure : run.failures()) {
                String text = failure.toString();
                lines.add("    FAILED "
                        + (text.length() > MESSAGE_LIMIT ? text.substring(0, MESSAGE_LIMIT) + "..." : text));
            }
        }
        return lines;
    }
}
