package io.hts.sample;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.observe.TaskTiming;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;

/**
 * Runs the three graphs once at start-up ({@code sample.run-jobs}) and prints what each computed,
 * how long it took and where its tasks ran; then exits unless {@code sample.keep-running}.
 */
@Component
public class SampleJobs implements ApplicationRunner {

    private static final Logger log = LoggerFactory.getLogger(SampleJobs.class);

    private final Scheduler scheduler;
    private final SampleProperties properties;
    private final ConfigurableApplicationContext context;

    SampleJobs(Scheduler scheduler, SampleProperties properties, ConfigurableApplicationContext context) {
        this.scheduler = scheduler;
        this.properties = properties;
        this.context = context;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (!properties.runJobs()) {
            return;
        }
        log.info(
                "HTS: {} workers, policy {}, devices {}",
                scheduler.parallelism(),
                scheduler.policy().name(),
                scheduler.systemStatus().devices().stream()
                        .map(d -> d.device().id() + " " + d.health() + " (" + d.detail() + ")")
                        .collect(Collectors.joining(", ")));
        for (String name : new String[] {"preprocessing", "sweep", "operators"}) {
            TaskGraph graph = scheduler.registeredGraphs().get(name);
            GraphRun run = scheduler.execute(graph);
            log.info("{}", describe(run));
        }
        if (!properties.keepRunning()) {
            int code = SpringApplication.exit(context, () -> 0);
            log.info("done (sample.keep-running=true keeps the dashboard at / and Actuator up)");
            if (code != 0) {
                throw new IllegalStateException("exit code " + code);
            }
        }
    }

    /** One run in a few lines: its result, makespan, where worker time went and the devices its tasks used. */
    static String describe(GraphRun run) {
        RunProfile p = run.profile();
        Map<Device, Long> byDevice = p.tasks().stream()
                .filter(TaskTiming::ran)
                .filter(t -> t.device() != null)
                .collect(Collectors.groupingBy(TaskTiming::device, Collectors.counting()));
        String result = switch (p.graphName()) {
            case "preprocessing" ->
                String.valueOf(run.result(run.graph().find("merge").orElseThrow()));
            case "sweep" -> String.valueOf(run.result(run.graph().find("best").orElseThrow()));
            default -> String.valueOf(run.result(run.graph().find("report").orElseThrow()));
        };
        StringBuilder out = new StringBuilder();
        out.append(p.graphName())
                .append(": ")
                .append(p.status())
                .append(" in ")
                .append(millis(p.makespan()))
                .append(", ")
                .append(p.tasks().size())
                .append(" tasks ")
                .append(byDevice)
                .append(String.format(
                        ", worker time: %.2f %% waits the scheduler caused, %.2f %% idle for want of ready tasks",
                        100 * p.workerTime().schedulerShare(),
                        100 * p.workerTime().shapeShare()))
                .append("\n  result: ")
                .append(result);
        for (TaskTiming t : p.slowest(3)) {
            out.append("\n  slow: ")
                    .append(t.taskName())
                    .append(" on ")
                    .append(t.device() == null ? "-" : t.device().id())
                    .append(" ")
                    .append(millis(Duration.ofNanos(t.durationNanos())));
        }
        return out.toString();
    }

    private static String millis(Duration d) {
        return String.format("%.1f ms", d.toNanos() / 1e6);
    }
}
