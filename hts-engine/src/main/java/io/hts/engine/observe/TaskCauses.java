package io.hts.engine.observe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Why each failed or cancelled task of a run is so, as text, for its profile: the description of
 * the failure of a FAILED task, and of the cause (the failure upstream, or the cancel) of a
 * CANCELLED one. Kept as text so that a kept profile holds no user exception (nor what it
 * references). Descendants cancelled by one failure share one cause, so each distinct cause is
 * described once and the tasks hold an index into the table: 4 bytes a task, only in runs that did
 * not succeed. Immutable.
 */
public final class TaskCauses {

    /** No task has a cause (a run that succeeded). */
    public static final TaskCauses NONE = new TaskCauses(null, List.of());

    /** By task index: 0 for none, else 1 + the index of its description. */
    private final int @Nullable [] index;

    private final List<String> descriptions;

    private TaskCauses(int @Nullable [] index, List<String> descriptions) {
        this.index = index;
        this.descriptions = descriptions;
    }

    /**
     * Collects the causes of a run's tasks.
     *
     * @param tasks the number of tasks
     * @param cause task {@code i}'s cause, {@code null} when it has none
     * @param describe how a cause reads (called once per distinct cause; must not throw)
     * @return the causes
     */
    public static TaskCauses collect(
            int tasks, IntFunction<@Nullable Throwable> cause, Function<Throwable, String> describe) {
        int[] index = null;
        List<String> descriptions = new ArrayList<>();
        Map<Throwable, Integer> seen = new IdentityHashMap<>();
        for (int i = 0; i < tasks; i++) {
            Throwable t = cause.apply(i);
            if (t == null) {
                continue;
            }
            if (index == null) {
                index = new int[tasks];
            }
            Integer k = seen.get(t);
            if (k == null) {
                descriptions.add(describe.apply(t));
                k = descriptions.size();
                seen.put(t, k);
            }
            index[i] = k;
        }
        return index == null ? NONE : new TaskCauses(index, List.copyOf(descriptions));
    }

    /**
     * Task {@code i}'s cause.
     *
     * @param i the task's index
     * @return its description, or {@code null} when it has none
     */
    public @Nullable String of(int i) {
        int[] x = index;
        if (x == null || i < 0 || i >= x.length || x[i] == 0) {
            return null;
        }
        return descriptions.get(x[i] - 1);
    }

    /** An estimate of the memory held: the index and the descriptions. */
    public long estimatedBytes() {
        long bytes = index == null ? 0 : 16 + 4L * index.length;
        for (String d : descriptions) {
            bytes += 40 + d.length();
        }
        return bytes;
    }

    @Override
    public String toString() {
        return "TaskCauses" + (index == null ? "[]" : Arrays.toString(descriptions.toArray()));
    }
}
