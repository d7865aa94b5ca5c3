package io.hts.engine.run;

/**
 * A task that failed for good.
 *
 * @param taskName the task's name
 * @param index its index in the graph
 * @param error the last attempt's failure
 * @param attempts the number of attempts made
 */
public record TaskFailure(String taskName, int index, Throwable error, int attempts) {

    @Override
    public String toString() {
        return taskName + ": " + describe(error) + (attempts > 1 ? " (after " + attempts + " attempts)" : "");
    }

    /**
     * How a failure reads in HTS's messages: its {@code toString()}, or, when that throws (a
     * user's exception may), its class name and a note; never throws itself.
     *
     * @param error the failure
     * @return the description
     */
    public static String describe(Throwable error) {
        try {
            return String.valueOf(error);
        } catch (Throwable broken) {
            return error.getClass().getName() + " (its toString() threw "
                    + broken.getClass().getName() + ")";
        }
    }
}
