package io.hts.engine.run;

import io.hts.engine.graph.TaskState;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The join half of a task added to a running run ({@link DynamicTask} is the attempt half): its
 * state word with its join counter, and its list of successors, with the one rule by which each
 * edge added while the task may be finishing is decided exactly once.
 *
 * <h2>The state word</h2>
 *
 * <p>One int, encoded as {@link DependencyManager}'s (state in the top bits, dependencies not yet
 * done in the low {@value DependencyManager#COUNT_BITS}), with the same transitions, less the
 * retries (a dynamic task has one attempt, no retry and no time limit yet):
 *
 * <pre>
 * CREATED --(the count reaches 0)--&gt; READY --tryStart--&gt; RUNNING --tryEnd--&gt; SUCCEEDED | FAILED | CANCELLED
 * CREATED | READY --tryCancel--&gt; CANCELLED
 * </pre>
 *
 * <p><b>Invariants.</b> (1) Every change is one compare-and-set from an expected state; the final
 * states are absorbing, and the thread whose compare-and-set made the task final is the one owner
 * of that end: it alone stores the cause (a result is stored by the owner of RUNNING before the
 * transition), publishes the event, seals the successor list and acts on it, and contributes the
 * task's one count to the run ({@link RunState}); a loser does nothing. (2) The count starts at
 * the number of dependencies plus one: the adder's <i>hold</i>, taken back ({@link #release()})
 * once every dependency is registered, so no dependency's end can make the task READY while its
 * adder still registers the others. CREATED to READY happens once, by the decrement that takes
 * the count to zero; a decrement of a task that is no longer CREATED (cancelled) only counts. (3)
 * RUNNING belongs to the worker that won {@link #tryStart}; cancellers never move a RUNNING task,
 * they ask it to stop ({@code ctx.isCancelled()}, an interrupt through {@link InterruptibleBody}).
 *
 * <h2>The successor list: add-an-edge against the end, one compare-and-set</h2>
 *
 * <p>{@code successors} is {@code null}, a stack of {@link Edge}s, or {@link #SEALED}. An adder
 * pushes an edge to a new task with a compare-and-set from the head it read, never onto
 * {@code SEALED}; the owner of this task's end, after its terminal transition, takes the whole
 * list with one {@code getAndSet(SEALED)}. The two touch one word, so each edge is decided once:
 * either its push came first and the owner finds it in the list it took (and counts the edge done
 * on SUCCEEDED, or cancels the dependent on FAILED or CANCELLED), or the seal came first and the
 * push fails on {@code SEALED}, and the adder, reading the state (final, since the seal follows
 * the transition), does the same itself at once. Never both, never neither.
 *
 * <p><b>Memory ordering.</b> Transitions and the list are compare-and-set or getAndSet (volatile);
 * {@link #state()} reads with volatile semantics, so what a winner wrote before its transition is
 * visible to whoever reads the new state, and the seal (written after the terminal transition) tells
 * an adder that finds it that the state it reads next is final.
 */
abstract class DynamicNode extends InterruptibleBody {

    private static final VarHandle WORD;
    private static final VarHandle SUCCESSORS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WORD = l.findVarHandle(DynamicNode.class, "word", int.class);
            SUCCESSORS = l.findVarHandle(DynamicNode.class, "successors", Object.class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final int COUNT_BITS = DependencyManager.COUNT_BITS;
    /** The largest count of a word. */
    static final int COUNT_MASK = (1 << COUNT_BITS) - 1;

    private static final int CREATED = TaskState.CREATED.ordinal();
    private static final int READY = TaskState.READY.ordinal();
    static final int RUNNING = TaskState.RUNNING.ordinal();
    static final int SUCCEEDED = TaskState.SUCCEEDED.ordinal();
    private static final int CANCELLED = TaskState.CANCELLED.ordinal();

    /** The head of a successor list whose task is final: nothing more is pushed. */
    static final Object SEALED = new Object() {
        @Override
        public String toString() {
            return "sealed";
        }
    };

    /** One dependent on a successor list (or a static task's list in {@link DynamicTasks}); immutable once pushed. */
    static final class Edge {
        final DynamicTask<?> to;
        final @Nullable Object next;

        Edge(DynamicTask<?> to, @Nullable Object next) {
            this.to = to;
            this.next = next;
        }
    }

    /** State and count (see the class comment); accessed through {@code WORD}. */
    private int word;
    /** null, an {@link Edge} stack, or {@link #SEALED}; accessed through {@code SUCCESSORS}. */
    private @Nullable Object successors;

    /** A node of {@code count} dependencies (the adder's hold included), CREATED; published with its task. */
    DynamicNode(int count) {
        this.word = count;
    }

    /** What the messages of a broken invariant call this task. */
    abstract String describe();

    /** Why a dependent of this final task, which did not succeed (state {@code s}), is cancelled. */
    abstract Throwable becauseEnded(TaskState s);

    // ================================================================== the state word

    private static int word(int state, int count) {
        return (state << COUNT_BITS) | count;
    }

    TaskState state() {
        return TaskState.of((int) WORD.getVolatile(this) >>> COUNT_BITS);
    }

    /** Dependencies (and the adder's hold) not yet done. */
    int remaining() {
        return (int) WORD.getVolatile(this) & COUNT_MASK;
    }

    /**
     * One dependency done (or the adder's hold given back); the last one moves the task from
     * CREATED to READY in the same step.
     *
     * @return whether this call made it READY (the caller dispatches it)
     */
    boolean dependencyDone() {
        while (true) {
            int v = (int) WORD.getVolatile(this);
            int count = v & COUNT_MASK;
            if (count == 0) {
                throw new IllegalStateException(
                        describe() + " was told of more finished dependencies than it has; this is a bug in HTS");
            }
            boolean last = count == 1 && (v >>> COUNT_BITS) == CREATED;
            if (WORD.compareAndSet(this, v, last ? word(READY, 0) : v - 1)) {
                return last;
            }
        }
    }

    /** READY to RUNNING: the worker that wins owns the RUNNING state. */
    boolean tryStart() {
        return change(READY, RUNNING);
    }

    /** CREATED or READY to CANCELLED; the winner owns the end. */
    boolean tryCancel() {
        while (true) {
            int v = (int) WORD.getVolatile(this);
            int s = v >>> COUNT_BITS;
            if (s != CREATED && s != READY) {
                return false;
            }
            if (WORD.compareAndSet(this, v, word(CANCELLED, v & COUNT_MASK))) {
                return true;
            }
        }
    }

    /** {@code from} to {@code to} by one compare-and-set, keeping the count; false when the task is not in {@code from}. */
    boolean change(int from, int to) {
        while (true) {
            int v = (int) WORD.getVolatile(this);
            if ((v >>> COUNT_BITS) != from) {
                return false;
            }
            if (WORD.compareAndSet(this, v, word(to, v & COUNT_MASK))) {
                return true;
            }
        }
    }

    // ================================================================== edges

    /**
     * Makes {@code dependent} wait for this task: the edge is pushed on this task's list, or, when
     * the list is sealed (this task is final), decided at once: counted done when this task
     * succeeded, the dependent cancelled when it failed or was cancelled (see the class comment).
     *
     * @return whether the edge was pushed (this task's end will decide it)
     */
    boolean addDependent(DynamicTask<?> dependent) {
        while (true) {
            Object head = SUCCESSORS.getVolatile(this);
            if (head == SEALED) {
                TaskState s = state(); // final: the seal follows the transition
                if (s == TaskState.SUCCEEDED) {
                    dependent.dependencyDone(); // never the last: its adder holds it
                } else {
                    dependent.cancelNotStarted(becauseEnded(s));
                }
                return false;
            }
            if (SUCCESSORS.compareAndSet(this, head, new Edge((DynamicTask<?>) dependent, head))) {
                return true;
            }
        }
    }

    /** The owner of this task's end takes its successors; nothing is pushed from now on. */
    @Nullable
    Object seal() {
        Object list = SUCCESSORS.getAndSet(this, SEALED);
        return list == SEALED ? null : list;
    }
}
