package io.hts.engine.observe;

import java.time.Duration;
import java.util.List;

/**
 * The chain of dependent tasks whose durations add up to the most: no schedule can finish the run
 * faster than this chain takes.
 *
 * @param tasks the tasks on the path, first to last
 * @param length the sum of their durations
 */
public record CriticalPath(List<String> tasks, Duration length) {}
