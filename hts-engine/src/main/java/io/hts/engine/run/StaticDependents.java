package io.hts.engine.run;

import io.hts.engine.graph.TaskState;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * The dynamic tasks of one run that wait for static tasks: one slot per static task, holding
 * null, a stack of {@link DynamicNode.Edge}s to the dynamic tasks that wait for it, or
 * {@link DynamicNode#SEALED} once its list was taken. Made by {@link DynamicTasks} with the run's
 * first such edge.
 *
 * <p><b>One decision per edge.</b> An adder pushes its edge on the static task's slot by
 * compare-and-set (never onto SEALED), then sets the run's watchers' volatile flag
 * ({@link TaskWatchers#dependents}), then reads the static task's state; the static task's ender
 * changes the state, then reads that flag ({@link TaskWatchers#ended}): one of the two sees the
 * other (the watchers' Dekker pair), and whichever takes the slot's list with
 * {@code getAndSet(SEALED)} decides every edge on it, once: counted done when the static task
 * succeeded, the dynamic task cancelled when it failed or was cancelled. An adder that finds the
 * slot sealed reads the state (final: the list is sealed only after the end) and decides its own
 * edge at once.
 */
final class StaticDependents {

    private final GraphRun run;
    private final DynamicTasks tasks;
    private final AtomicReferenceArray<@Nullable Object> slots;

    StaticDependents(GraphRun run, DynamicTasks tasks) {
        this.run = run;
        this.tasks = tasks;
        this.slots = new AtomicReferenceArray<>(run.topology.size());
    }

    /** Makes {@code t} wait for static task {@code s}. */
    void add(int s, DynamicTask<?> t) {
        while (true) {
            Object head = slots.get(s);
            if (head == DynamicNode.SEALED) {
                decide(s, run.deps.state(s), t); // final: the list is sealed only after the task's end
                return;
            }
            if (slots.compareAndSet(s, head, new DynamicNode.Edge(t, head))) {
                break;
            }
        }
        run.watchers.dependents(tasks); // after the push, before the look at the state: the Dekker pair
        if (run.deps.state(s).isTerminal()) {
            ended(s); // the ender may not have seen the push: one of the two takes the list
        }
    }

    /** Static task {@code s} is final: whoever takes its list (its ender, or an adder that found it final) decides its edges. */
    void ended(int s) {
        Object head = slots.get(s);
        if (head == null || head == DynamicNode.SEALED) {
            return; // none yet: a later adder finds the task final itself
        }
        Object list = slots.getAndSet(s, DynamicNode.SEALED);
        if (list == null || list == DynamicNode.SEALED) {
            return;
        }
        TaskState state = run.deps.state(s);
        for (Object e = list; e != null; e = ((DynamicNode.Edge) e).next) {
            decide(s, state, ((DynamicNode.Edge) e).to);
        }
    }

    private void decide(int s, TaskState state, DynamicTask<?> t) {
        if (state == TaskState.SUCCEEDED) {
            if (t.dependencyDone()) {
                tasks.dispatch(t.readied(), null);
            }
        } else {
            t.cancelNotStarted(tasks.becauseEnded(run.topology.name(s), state, run.errorOf(s)));
        }
    }
}
