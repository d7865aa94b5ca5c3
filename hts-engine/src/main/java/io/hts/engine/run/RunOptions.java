package io.hts.engine.run;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Options of one run.
 *
 * @param failureMode what the run does when a task fails; {@code null} for the scheduler's default
 */
public record RunOptions(@Nullable FailureMode failureMode) {

    /** The scheduler's defaults. */
    public static RunOptions defaults() {
        return new RunOptions(null);
    }

    /**
     * A run with a given failure mode.
     *
     * @param mode the mode
     * @return the options
     */
    public static RunOptions failureMode(FailureMode mode) {
        return new RunOptions(Objects.requireNonNull(mode, "mode"));
    }
}
