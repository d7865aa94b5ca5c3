package io.hts.sample.sweep;

import java.util.Comparator;
import java.util.List;

/**
 * The sweep's aggregate: its best points by error, and whether the best is the observed outbreak's
 * own parameters.
 *
 * @param simulations how many simulations were aggregated
 * @param top the best points, best first
 * @param truth the grid point that was observed
 */
public record SweepFit(int simulations, List<SweepPoint> top, SweepPoint truth) {

    /** How many of the best points the fit keeps. */
    public static final int TOP = 3;

    /**
     * Aggregates the simulations; fails when the best fit is not the truth.
     *
     * @param points every simulation, in grid order
     * @param truth the observed grid point
     * @return the fit
     * @throws IllegalStateException when the best fit is another point
     */
    public static SweepFit of(List<SweepPoint> points, int truth) {
        List<SweepPoint> top = points.stream()
                .sorted(Comparator.comparingDouble(SweepPoint::rmse).thenComparingInt(SweepPoint::index))
                .limit(TOP)
                .toList();
        SweepFit fit = new SweepFit(points.size(), top, points.get(truth));
        if (fit.best().index() != truth) {
            throw new IllegalStateException(String.format(
                    java.util.Locale.ROOT,
                    "the sweep's best fit (beta %.3f, gamma %.3f, rmse %.1f) is not the observed outbreak's"
                            + " parameters (beta %.3f, gamma %.3f, rmse %.1f)",
                    fit.best().beta(),
                    fit.best().gamma(),
                    fit.best().rmse(),
                    fit.truth().beta(),
                    fit.truth().gamma(),
                    fit.truth().rmse()));
        }
        return fit;
    }

    /** The best point. */
    public SweepPoint best() {
        return top.get(0);
    }
}
