package io.hts.sample.headline;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.Elapsed;
import io.hts.engine.run.GraphRun;
import io.hts.sample.Format;
import io.hts.sample.RunFigures;
import io.hts.sample.SampleProperties;
import io.hts.sample.SampleScenario;
import java.time.Duration;
import java.util.List;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Scenario (d1) in the summary: the independent tasks, against the seed's target of 10,000 tasks of
 * 0.5 ms done within 2 s on its 8 threads. That is 5 s of work in 2 s, an efficiency (ideal time over
 * makespan) of at least 31 %, which is what a machine with another number of workers is held to.
 */
@Component
@Order(4)
public class IndependentScenario implements SampleScenario {

    /** The seed's target as an efficiency: (10,000 x 0.5 ms / 8 threads) / 2 s. */
    public static final double SEED_EFFICIENCY = 10_000 * 0.5e-3 / 8 / 2;

    private final CalibratedSpin spin;
    private final IndependentTasks tasks;

    IndependentScenario(SampleProperties properties, CalibratedSpin spin) {
        this.spin = spin;
        this.tasks = new IndependentTasks(properties.headline().independentTasks(), spin);
    }

    @Override
    public String label() {
        return "(d1) independent";
    }

    @Override
    public String description() {
        return Format.of(
                "%s independent tasks of %s busy work (a calibrated spin of %s iterations)",
                Format.count(tasks.tasks().size()), Elapsed.of(spin.target()), Format.count(spin.iterations()));
    }

    @Override
    public TaskGraph graph() {
        return tasks.graph();
    }

    @Override
    public List<String> results(GraphRun run) {
        RunFigures f = RunFigures.of(run.profile());
        int n = tasks.tasks().size();
        List<Long> results = run.results(tasks.tasks());
        Duration mean = f.work().dividedBy(Math.max(1, n));
        return List.of(
                Format.of(
                        "%s of %s tasks returned, checksum %016x; measured mean %s a task%s",
                        Format.count(results.size()),
                        Format.count(n),
                        IndependentTasks.checksum(results),
                        Elapsed.of(mean),
                        mean.toNanos() > 1.5 * spin.target().toNanos()
                                ? " (calibrated " + Elapsed.of(spin.target()) + ": the cores were shared)"
                                : ""),
                Format.of(
                        "seed target: 10,000 x 0.5 ms in <= 2 s on 8 threads = efficiency >= %s: %s (%s, %s on %d workers)",
                        Format.percent(SEED_EFFICIENCY),
                        f.efficiency() >= SEED_EFFICIENCY ? "met" : "MISSED",
                        Format.percent(f.efficiency()),
                        Elapsed.of(f.makespan()),
                        f.workers()));
    }
}
