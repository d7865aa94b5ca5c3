package io.hts.engine.run;

/**
 * A task that failed for good.
 *
 * @param task the task's name
 * @param index its index in the graph
 * @param error the last attempt's failure
 * @param attempts the number of attempts made
 */
public record TaskFailure(String task, int index, Throwable error, int attempts) {

    @Override
    public String toString() {
        return task + ": " + error + (attempts > 1 ? " (after " + attempts + " attempts)" : "");
    }
}
