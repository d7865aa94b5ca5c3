package io.hts.sample.sweep;

/**
 * The SEIR model of an outbreak in a closed population: S' = -beta S I / N, E' = beta S I / N -
 * sigma E, I' = sigma E - gamma I, R' = gamma I, integrated with the classical Runge-Kutta method
 * (RK4) at a fixed step, reporting the new cases (E to I) of each day.
 */
public final class SeirModel {

    /** People in the population. */
    public static final double POPULATION = 1_000_000;

    /** Infectious people on day 0 (everyone else susceptible). */
    public static final double INITIAL_INFECTIOUS = 10;

    /** The rate at which the exposed become infectious: a 5-day latent period. */
    public static final double SIGMA = 0.2;

    private SeirModel() {}

    /**
     * One outbreak, day by day.
     *
     * @param beta transmission rate per day
     * @param gamma recovery rate per day
     * @param days days to simulate
     * @param stepsPerDay RK4 steps per day
     * @return the outbreak's daily new cases and final state
     */
    public static Outbreak simulate(double beta, double gamma, int days, int stepsPerDay) {
        double h = 1.0 / stepsPerDay;
        double s = POPULATION - INITIAL_INFECTIOUS;
        double e = 0;
        double i = INITIAL_INFECTIOUS;
        double cases = 0; // cumulative E -> I
        double[] daily = new double[days];
        double k = beta / POPULATION;
        for (int day = 0; day < days; day++) {
            double before = cases;
            for (int step = 0; step < stepsPerDay; step++) {
                // k1..k4 of (S, E, I, C); R follows from the others
                double s1 = -k * s * i;
                double e1 = -s1 - SIGMA * e;
                double i1 = SIGMA * e - gamma * i;
                double c1 = SIGMA * e;
                double sa = s + h / 2 * s1;
                double ea = e + h / 2 * e1;
                double ia = i + h / 2 * i1;
                double s2 = -k * sa * ia;
                double e2 = -s2 - SIGMA * ea;
                double i2 = SIGMA * ea - gamma * ia;
                double c2 = SIGMA * ea;
                double sb = s + h / 2 * s2;
                double eb = e + h / 2 * e2;
                double ib = i + h / 2 * i2;
                double s3 = -k * sb * ib;
                double e3 = -s3 - SIGMA * eb;
                double i3 = SIGMA * eb - gamma * ib;
                double c3 = SIGMA * eb;
                double sc = s + h * s3;
                double ec = e + h * e3;
                double ic = i + h * i3;
                double s4 = -k * sc * ic;
                double e4 = -s4 - SIGMA * ec;
                double i4 = SIGMA * ec - gamma * ic;
                double c4 = SIGMA * ec;
                s += h / 6 * (s1 + 2 * s2 + 2 * s3 + s4);
                e += h / 6 * (e1 + 2 * e2 + 2 * e3 + e4);
                i += h / 6 * (i1 + 2 * i2 + 2 * i3 + i4);
                cases += h / 6 * (c1 + 2 * c2 + 2 * c3 + c4);
            }
            daily[day] = cases - before;
        }
        return new Outbreak(daily, 1 - s / POPULATION);
    }

    /**
     * An outbreak's course.
     *
     * @param daily new cases of each day
     * @param attackRate the share of the population infected by the end
     */
    public record Outbreak(double[] daily, double attackRate) {

        /** The day with the most new cases. */
        public int peakDay() {
            int peak = 0;
            for (int d = 1; d < daily.length; d++) {
                if (daily[d] > daily[peak]) {
                    peak = d;
                }
            }
            return peak;
        }

        /** The root-mean-square difference from observed daily cases. */
        public double rmse(double[] observed) {
            double sum = 0;
            for (int d = 0; d < daily.length; d++) {
                double diff = daily[d] - observed[d];
                sum += diff * diff;
            }
            return Math.sqrt(sum / daily.length);
        }
    }
}
