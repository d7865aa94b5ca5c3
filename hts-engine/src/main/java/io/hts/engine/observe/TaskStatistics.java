package io.hts.engine.observe;

import java.time.Duration;

/**
 * Duration statistics of every task of one graph with one statistics name (a task name, or a group
 * name), over the runs the profiler has seen. Two graphs' tasks that share a name are apart. Every
 * task whose last attempt ran to its end counts, however it ended: it succeeded, it failed, or it
 * was cancelled while it ran ({@link #failed()} and {@link #cancelled()} say how many of
 * {@link #count()} did not succeed); a task that never ran (cancelled before it started) does not.
 *
 * @param graphName the graph's name
 * @param name the statistics name
 * @param count the number of executions (the last attempt of each task that ran)
 * @param mean the mean duration
 * @param p50 the median
 * @param p90 the 90th percentile
 * @param p99 the 99th percentile
 * @param max the longest
 * @param failed how many of them failed
 * @param cancelled how many of them were cancelled while they ran
 */
public record TaskStatistics(
        String graphName,
        String name,
        long count,
        Duration mean,
        Duration p50,
        Duration p90,
        Duration p99,
        Duration max,
        long failed,
        long cancelled) {}
