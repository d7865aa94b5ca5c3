package io.hts.sample.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.sample.SampleProperties;
import io.hts.sample.SmallSample;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** Scenario (b) at a small scale: the run's aggregate is the one a plain loop over the grid finds. */
@SmallSample
class EpidemicSweepTests {

    @Autowired
    Scheduler scheduler;

    @Autowired
    SampleProperties properties;

    @Autowired
    SweepScenario scenario;

    @Test
    void theSweepsFitIsTheSequentialLoopsAndFindsTheObservedParameters() {
        EpidemicSweep sweep = new EpidemicSweep(properties.sweep());
        GraphRun run = scheduler.submit(sweep.graph()).await();
        SweepFit fit = run.result(sweep.fit());

        // the same grid, one simulation after the other, without the scheduler
        SampleProperties.Sweep s = properties.sweep();
        double[] observed = sweep.grid().observed();
        List<double[]> direct = new ArrayList<>(); // beta, gamma, rmse
        for (int b = 0; b < s.betaSteps(); b++) {
            for (int g = 0; g < s.gammaSteps(); g++) {
                double beta = 0.15 + 0.01 * b;
                double gamma = 0.05 + 0.005 * g;
                direct.add(new double[] {
                    beta,
                    gamma,
                    SeirModel.simulate(beta, gamma, s.days(), s.stepsPerDay()).rmse(observed)
                });
            }
        }
        double[] best =
                direct.stream().min((x, y) -> Double.compare(x[2], y[2])).orElseThrow();

        assertThat(fit.simulations()).isEqualTo(s.betaSteps() * s.gammaSteps()).isEqualTo(48);
        assertThat(fit.best().beta()).isCloseTo(best[0], within(1e-12));
        assertThat(fit.best().gamma()).isCloseTo(best[1], within(1e-12));
        assertThat(fit.best().rmse()).isEqualTo(best[2]);
        assertThat(fit.best()).isEqualTo(fit.truth());
        assertThat(fit.truth().beta()).isCloseTo(0.18, within(1e-12)); // 3/8 up 8 betas, 1/3 up 6 gammas
        assertThat(fit.truth().gamma()).isCloseTo(0.06, within(1e-12));
        List<SweepPoint> points = run.results(sweep.simulations());
        for (int p = 0; p < points.size(); p++) {
            assertThat(points.get(p).rmse()).as("point %d", p).isEqualTo(direct.get(p)[2]);
        }
        assertThat(fit.top()).hasSize(SweepFit.TOP).isSortedAccordingTo((x, y) -> Double.compare(x.rmse(), y.rmse()));
    }

    @Test
    void theModelKeepsThePopulationAndPeaksOnce() {
        SeirModel.Outbreak o = SeirModel.simulate(0.3, 0.1, 300, 50);
        double cases = 0;
        for (double d : o.daily()) {
            assertThat(d).isGreaterThanOrEqualTo(0);
            cases += d;
        }
        // R0 = 3: the final-size equation z = 1 - exp(-R0 z) gives z = 0.9405
        assertThat(o.attackRate()).isCloseTo(0.9405, within(0.002));
        assertThat(cases / SeirModel.POPULATION).isCloseTo(o.attackRate(), within(1e-3));
        assertThat(o.peakDay()).isBetween(40, 120);
    }

    @Test
    void aFitThatMissesTheObservedPointFailsLoudly() {
        List<SweepPoint> points =
                List.of(new SweepPoint(0, 0.2, 0.1, 5.0, 50, 0.8), new SweepPoint(1, 0.3, 0.1, 9.0, 40, 0.9));
        assertThatThrownBy(() -> SweepFit.of(points, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is not the observed outbreak's parameters (beta 0.300");
    }

    @Test
    void theScenarioPrintsTheBestPointsAsATable() {
        GraphRun run = scheduler.submit(scenario.graph()).await();
        List<String> lines = scenario.results(run);
        assertThat(lines.get(0)).contains("best of 48 simulations is the observed outbreak's beta 0.180", "OK");
        assertThat(lines).hasSize(2 + SweepFit.TOP);
        assertThat(lines.get(2)).startsWith("   1  0.180  0.060");
    }
}
