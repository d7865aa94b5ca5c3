package io.hts.sample.operators;

import java.util.List;

/**
 * The benchmark's table, every cell checked.
 *
 * @param cpuBlas the JVM BLAS implementation the CPU cells used
 * @param workers the CPU workers the tiles and bands were spread over
 * @param gpu the GPU's description, or {@code none} when no GPU is usable
 * @param measurements every cell, in the order measured
 */
public record OperatorReport(String cpuBlas, int workers, String gpu, List<Measurement> measurements) {}
