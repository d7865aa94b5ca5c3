package io.hts.sample;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What the sample does at start-up, and the scale of each scenario ({@code sample.*}). The defaults
 * are the seed's scale; tests set them small.
 *
 * @param runJobs whether to run the scenarios at start-up
 * @param keepRunning whether to stay up afterwards (the dashboard and Actuator), instead of exiting
 * @param features scenario (a), feature engineering
 * @param sweep scenario (b), the parameter sweep
 * @param operators scenario (c), the operator benchmark
 * @param headline scenario (d), the seed's headline workloads
 */
@ConfigurationProperties("sample")
public record SampleProperties(
        boolean runJobs,
        boolean keepRunning,
        @DefaultValue Features features,
        @DefaultValue Sweep sweep,
        @DefaultValue Operators operators,
        @DefaultValue Headline headline) {

    /**
     * {@code sample.features.*}: the generated table and how it is sharded.
     *
     * @param rows rows of the table
     * @param columns float columns (kinds cycle: normal, uniform, exponential, bimodal)
     * @param shards shards (a task group per stage)
     * @param projections features extracted per row (a fixed random projection of the normalised row)
     * @param seed the generator's seed
     */
    public record Features(
            @DefaultValue("1000000") int rows,
            @DefaultValue("32") int columns,
            @DefaultValue("32") int shards,
            @DefaultValue("8") int projections,
            @DefaultValue("42") long seed) {

        public Features {
            require(rows >= shards && shards >= 1, "sample.features: need rows >= shards >= 1");
            require(columns >= 1 && projections >= 1, "sample.features: need columns >= 1 and projections >= 1");
            require(
                    (long) rows * Math.max(columns, projections) / shards < Integer.MAX_VALUE
                            && (long) rows * projections < Integer.MAX_VALUE,
                    "sample.features: a shard's values and the merged features must fit a Java array");
        }
    }

    /**
     * {@code sample.sweep.*}: the SEIR model's parameter grid and its integration.
     *
     * @param betaSteps transmission rates on the grid (0.15, 0.16, ...)
     * @param gammaSteps recovery rates on the grid (0.050, 0.055, ...)
     * @param days days simulated and observed
     * @param stepsPerDay RK4 steps per day
     */
    public record Sweep(
            @DefaultValue("40") int betaSteps,
            @DefaultValue("30") int gammaSteps,
            @DefaultValue("160") int days,
            @DefaultValue("200") int stepsPerDay) {

        public Sweep {
            require(betaSteps >= 2 && gammaSteps >= 2, "sample.sweep: need at least 2 x 2 grid points");
            require(days >= 1 && stepsPerDay >= 1, "sample.sweep: need days >= 1 and steps-per-day >= 1");
            require(
                    (long) betaSteps * gammaSteps < Integer.MAX_VALUE,
                    "sample.sweep: beta-steps x gamma-steps (one task a simulation) must be below 2^31");
        }
    }

    /**
     * {@code sample.operators.*}: the benchmark's sizes and how much work each measurement does.
     *
     * @param cpuGemmSizes square GEMM sizes measured on the CPU
     * @param gpuGemmSizes square GEMM sizes measured on the GPU, when one is usable
     * @param axpyLength elements of the AXPY vectors (the memory-bound operator)
     * @param cpuGflop floating-point work per CPU GEMM measurement, in GFLOP (repetitions are added up to it)
     * @param gpuGflop the same on the GPU
     */
    public record Operators(
            @DefaultValue({"256", "512", "1024", "2048"}) List<Integer> cpuGemmSizes,

            @DefaultValue({"256", "512", "1024", "2048", "4096", "8192"})
            List<Integer> gpuGemmSizes,

            @DefaultValue("16777216") int axpyLength,
            @DefaultValue("6") double cpuGflop,
            @DefaultValue("5000") double gpuGflop) {

        /** The largest GEMM size: its n x n operands are Java arrays. */
        static final int MAX_GEMM = 46_340;

        public Operators {
            cpuGemmSizes = List.copyOf(cpuGemmSizes);
            gpuGemmSizes = List.copyOf(gpuGemmSizes);
            require(
                    cpuGemmSizes.stream().allMatch(n -> n >= 1)
                            && gpuGemmSizes.stream().allMatch(n -> n >= 1),
                    "sample.operators: GEMM sizes must be positive");
            require(
                    cpuGemmSizes.stream().allMatch(n -> n <= MAX_GEMM)
                            && gpuGemmSizes.stream().allMatch(n -> n <= MAX_GEMM),
                    "sample.operators: GEMM sizes must be at most " + MAX_GEMM
                            + " (an n x n matrix of floats must fit a Java array)");
            require(
                    axpyLength >= 1 && cpuGflop > 0 && gpuGflop > 0,
                    "sample.operators: sizes and work must be positive");
        }
    }

    /**
     * {@code sample.headline.*}: the seed's targets, 10,000 independent tasks of 0.5 ms and a
     * 5,000-node DAG of depth 100.
     *
     * @param independentTasks tasks of the independent workload
     * @param taskWork how long each task's calibrated busy work takes on one core
     * @param dagNodes nodes of the layered DAG
     * @param dagDepth its layers (nodes are spread evenly over them)
     * @param maxParents the most parents a node draws from the layer above (at least one)
     * @param seed the seed of the DAG's random edges
     */
    public record Headline(
            @DefaultValue("10000") int independentTasks,
            @DefaultValue("500us") Duration taskWork,
            @DefaultValue("5000") int dagNodes,
            @DefaultValue("100") int dagDepth,
            @DefaultValue("3") int maxParents,
            @DefaultValue("7") long seed) {

        public Headline {
            require(independentTasks >= 1, "sample.headline.independent-tasks must be positive");
            require(!taskWork.isNegative() && !taskWork.isZero(), "sample.headline.task-work must be positive");
            require(dagDepth >= 1 && dagNodes >= dagDepth, "sample.headline: need dag-nodes >= dag-depth >= 1");
            require(maxParents >= 1, "sample.headline.max-parents must be at least 1");
        }
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
