package io.hts.engine.run;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * Each task's result or cause in one run, one slot per task (laid out by
 * {@link GraphTopology#slot(int)}).
 *
 * <p><b>Publication.</b> A result is stored by the owner of the task's RUNNING state before its
 * transition to SUCCEEDED: a plain store, published by that compare-and-set to whoever reads the
 * state afterwards (a successor made ready through it, {@code run.result(task)}). A cause is
 * stored (as an {@code Outcome} in the same slot) by the owner of a FAILED or CANCELLED transition:
 * before it when that owner ran the task, right after it (a release store) when it cancelled a task
 * that had not started; {@link #errorOf} waits out that one store. A device-ordered task's result
 * is stored when its work is enqueued, for the successors that follow that work on the device.
 */
final class TaskResults implements TaskWatchers.Outcomes {

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Object[].class);

    private final GraphTopology topology;
    private final DependencyManager deps;
    private final Object[] slots;

    TaskResults(GraphTopology topology, DependencyManager deps) {
        this.topology = topology;
        this.deps = deps;
        this.slots = new Object[topology.slots()];
    }

    @Override
    public TaskState state(int i) {
        return deps.observed(i);
    }

    /** The result slot of task {@code i}: its result once it succeeded (or its work is enqueued on a device). */
    @Override
    public @Nullable Object resultOf(int i) {
        return slots[topology.slot(i)];
    }

    /**
     * Stores a result, by the owner of the task's RUNNING state, before its transition (plain store).
     * A null result is not stored: the slot holds null until a task's one terminal transition (a
     * cause is stored only then), so there is nothing to overwrite, and a body that returns nothing
     * costs no write to the run's shared array.
     */
    void store(int i, @Nullable Object result) {
        if (result != null) {
            slots[topology.slot(i)] = result;
        }
    }

    /** Stores why a task failed or was cancelled, by the owner of that transition (release store). */
    void storeCause(int i, Throwable cause) {
        SLOTS.setRelease(slots, topology.slot(i), new Outcome(cause));
    }

    /** Why a FAILED or CANCELLED task is so, else null; waits out the one store after a canceller's transition. */
    @Override
    public @Nullable Throwable errorOf(int i) {
        TaskState s = deps.state(i);
        if (s != TaskState.FAILED && s != TaskState.CANCELLED) {
            return null;
        }
        int slot = topology.slot(i);
        for (int spins = 0; ; spins++) {
            if (SLOTS.getAcquire(slots, slot) instanceof Outcome o) {
                return o.error;
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** The outcome stored in place of a result for a failed or cancelled task. */
    private record Outcome(Throwable error) {}
}
