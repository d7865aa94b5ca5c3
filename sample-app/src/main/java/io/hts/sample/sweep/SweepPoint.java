package io.hts.sample.sweep;

/**
 * One simulation of the sweep.
 *
 * @param index its grid point
 * @param beta the transmission rate
 * @param gamma the recovery rate
 * @param rmse the root-mean-square error of its daily cases against the observed ones
 * @param peakDay the day of most new cases
 * @param attackRate the share of the population infected by the end
 */
public record SweepPoint(int index, double beta, double gamma, double rmse, int peakDay, double attackRate) {

    /** The basic reproduction number, beta / gamma. */
    public double r0() {
        return beta / gamma;
    }
}
