package io.hts.engine.observe;

/**
 * How one CPU worker spent a run.
 *
 * @param worker the worker's index
 * @param tasks tasks of this run it executed
 * @param busyNanos time it spent in this run's task bodies
 * @param idleNanos the rest of the run's makespan
 */
public record WorkerUsage(int worker, long tasks, long busyNanos, long idleNanos) {}
