package io.hts.sample.sweep;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import io.hts.sample.Format;
import io.hts.sample.SampleProperties;
import io.hts.sample.SampleScenario;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/** Scenario (b) in the summary: the sweep at {@code sample.sweep.*}'s scale. */
@Component
@Order(2)
public class SweepScenario implements SampleScenario {

    private final SampleProperties.Sweep settings;
    private final EpidemicSweep sweep;

    SweepScenario(SampleProperties properties) {
        this.settings = properties.sweep();
        this.sweep = new EpidemicSweep(settings);
    }

    @Override
    public String label() {
        return "(b) sweep";
    }

    @Override
    public String description() {
        return Format.of(
                "SEIR epidemic fitted over a %d x %d (beta, gamma) grid: %s simulations of %d days (RK4, %d steps/day)",
                settings.betaSteps(),
                settings.gammaSteps(),
                Format.count(sweep.grid().points()),
                settings.days(),
                settings.stepsPerDay());
    }

    @Override
    public TaskGraph graph() {
        return sweep.graph();
    }

    @Override
    public List<String> results(GraphRun run) {
        SweepFit fit = run.result(sweep.fit());
        List<String> lines = new ArrayList<>();
        lines.add(Format.of(
                "check: best of %s simulations is the observed outbreak's beta %.3f, gamma %.3f (R0 %.2f): OK",
                Format.count(fit.simulations()),
                fit.truth().beta(),
                fit.truth().gamma(),
                fit.truth().r0()));
        lines.add("rank   beta  gamma    R0     rmse  peak day  attack rate");
        int rank = 1;
        for (SweepPoint p : fit.top()) {
            lines.add(Format.of(
                    "%4d  %.3f  %.3f  %4.2f  %7.1f  %8d  %11s",
                    rank++, p.beta(), p.gamma(), p.r0(), p.rmse(), p.peakDay(), Format.percent(p.attackRate())));
        }
        return lines;
    }
}
