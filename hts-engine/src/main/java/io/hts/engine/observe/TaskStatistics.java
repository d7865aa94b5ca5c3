package io.hts.engine.observe;

import java.time.Duration;

/**
 * Duration statistics of every task of one graph with one statistics name (a task name, or a group
 * name), over the runs the profiler has seen. Two graphs' tasks that share a name are apart.
 *
 * @param graphName the graph's name
 * @param name the statistics name
 * @param count the number of executions
 * @param mean the mean duration
 * @param p50 the median
 * @param p90 the 90th percentile
 * @param p99 the 99th percentile
 * @param max the longest
 */
public record TaskStatistics(
        String graphName,
        String name,
        long count,
        Duration mean,
        Duration p50,
        Duration p90,
        Duration p99,
        Duration max) {}
