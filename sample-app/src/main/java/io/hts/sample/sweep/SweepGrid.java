package io.hts.sample.sweep;

import io.hts.sample.SampleProperties;
import java.util.SplittableRandom;

/**
 * The grid of (beta, gamma) the sweep simulates, and the outbreak it is fitted to: the model's own
 * course at one grid point (the truth, three eighths up the betas and a third up the gammas) with
 * up to 5 % of seeded noise on each day's count. A good sweep finds that point again.
 *
 * @param settings the grid's size and the integration
 */
public record SweepGrid(SampleProperties.Sweep settings) {

    /** The first beta and the step between betas. */
    public static final double BETA_FROM = 0.15;

    public static final double BETA_STEP = 0.01;

    /** The first gamma and the step between gammas. */
    public static final double GAMMA_FROM = 0.05;

    public static final double GAMMA_STEP = 0.005;

    private static final double NOISE = 0.05;

    /** Grid points: simulations. */
    public int points() {
        return settings.betaSteps() * settings.gammaSteps();
    }

    /** The beta of point {@code p}. */
    public double beta(int p) {
        return BETA_FROM + BETA_STEP * (p / settings.gammaSteps());
    }

    /** The gamma of point {@code p}. */
    public double gamma(int p) {
        return GAMMA_FROM + GAMMA_STEP * (p % settings.gammaSteps());
    }

    /** The point whose outbreak was observed. */
    public int truth() {
        return settings.betaSteps() * 3 / 8 * settings.gammaSteps() + settings.gammaSteps() / 3;
    }

    /** Point {@code p} simulated and scored against the observed counts. */
    public SweepPoint simulate(int p, double[] observed) {
        SeirModel.Outbreak o = SeirModel.simulate(beta(p), gamma(p), settings.days(), settings.stepsPerDay());
        return new SweepPoint(p, beta(p), gamma(p), o.rmse(observed), o.peakDay(), o.attackRate());
    }

    /** The observed daily counts: the truth's, with seeded noise. */
    public double[] observed() {
        double[] daily = SeirModel.simulate(beta(truth()), gamma(truth()), settings.days(), settings.stepsPerDay())
                .daily();
        SplittableRandom noise = new SplittableRandom(2020);
        for (int d = 0; d < daily.length; d++) {
            daily[d] *= 1 + NOISE * (2 * noise.nextDouble() - 1);
        }
        return daily;
    }
}
