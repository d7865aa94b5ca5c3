package io.hts.engine.run;

import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Releasable;
import io.hts.engine.graph.TaskState;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * When a {@link Releasable} result (a device buffer) may be released: when nothing can read it any
 * more. Kept for graphs with GPU bodies, whose results may hold device memory.
 *
 * <p><b>References.</b> A task with successors starts with one reference per successor plus one of
 * its own: its own is dropped when it becomes final, each successor's when that successor becomes
 * final (succeeded, failed or cancelled, whether it ran or not). An attempt whose time limit passed
 * while its body still runs takes one more reference on each of its inputs (before its task can
 * become final, so the count cannot reach zero in between) and drops it when its body returns:
 * an abandoned body may still read its inputs, and on a GPU its kernels may still use them. The
 * thread whose decrement reaches zero releases the result, if the task succeeded with a
 * {@code Releasable}. A task nothing depends on has no count: its result is the caller's.
 *
 * <p>Counts are an {@link AtomicIntegerArray} indexed by slot; each decrement is one atomic
 * operation, so exactly one thread sees zero.
 */
final class ResultLifetimes {

    private final GraphRun run;
    private final GraphTopology topology;
    private final AtomicIntegerArray refs;
    /**
     * Results handed to device-ordered successors before their task completed: released by the run
     * even when that task then fails (its result slot then holds the failure), once every
     * successor has ended. Set before any successor is dispatched, read after the count reached zero.
     */
    private final AtomicReferenceArray<@Nullable Object> handedOut;

    ResultLifetimes(GraphRun run) {
        this.run = run;
        this.topology = run.topology;
        this.refs = new AtomicIntegerArray(topology.slots());
        this.handedOut = new AtomicReferenceArray<>(topology.slots());
        for (int i = 0, n = topology.size(); i < n; i++) {
            int out = topology.outDegree(i);
            if (out > 0) {
                refs.set(topology.slot(i), out + 1);
            }
        }
    }

    /** Task {@code i} became final: it drops its own reference and one on each of its inputs. */
    void ended(int i) {
        if (topology.outDegree(i) > 0) {
            drop(i);
        }
        for (int k = topology.predecessorStart(i), stop = topology.predecessorEnd(i); k < stop; k++) {
            drop(topology.predecessor(k));
        }
    }

    /** An attempt of task {@code i} was abandoned while its body may still read its inputs. */
    void readerAbandoned(int i) {
        for (int k = topology.predecessorStart(i), stop = topology.predecessorEnd(i); k < stop; k++) {
            refs.incrementAndGet(topology.slot(topology.predecessor(k)));
        }
    }

    /** The abandoned body of an attempt of task {@code i} returned. */
    void readerReturned(int i) {
        for (int k = topology.predecessorStart(i), stop = topology.predecessorEnd(i); k < stop; k++) {
            drop(topology.predecessor(k));
        }
    }

    /** A device attempt of task {@code i} handed its result to successors that follow it on the device. */
    void handedOut(int i, @Nullable Object result) {
        if (result instanceof Releasable && topology.outDegree(i) > 0) {
            handedOut.set(topology.slot(i), result);
        }
    }

    private void drop(int p) {
        int slot = topology.slot(p);
        int left = refs.decrementAndGet(slot);
        if (left == 0) {
            Object result = run.resultOf(p);
            Object r = result instanceof Releasable ? result : handedOut.get(slot);
            if (r instanceof Releasable releasable && !passedOn(p, releasable)) {
                release(releasable, run, p);
            }
        } else if (left < 0) {
            throw new IllegalStateException("the result of task '" + topology.name(p) + "' lost more references"
                    + " than it had; this is a bug in HTS");
        }
    }

    /**
     * Gives back the resources an attempt held. A GPU attempt that declared {@code gpu-memory} and
     * returned a {@link Releasable} that can report its release (a device buffer) keeps that part
     * of its reservation until the result is given back, by the run or by the caller: the memory
     * is still taken, so a task admitted against it must not find it missing half-way.
     */
    static void giveBack(ResourceDemand held, TaskExecution e, @Nullable Object result, ExecutionPlan plan) {
        ResourceDemand memory = plan.gpuMemoryDemand(e.index);
        if (memory == null || e.device != Device.GPU || !(result instanceof Releasable r)) {
            held.limiter().release(held);
            return;
        }
        ResourceDemand rest = plan.cpuDemand(e.index);
        if (rest != null) {
            held.limiter().release(rest);
        }
        if (!r.whenReleased(() -> held.limiter().release(memory))) {
            held.limiter().release(memory); // it cannot say when: the reservation ends with the task
        }
    }

    /**
     * Whether a successor that succeeded returned {@code r} itself (a body that works on its input
     * in place and passes it on): the successor's lifetime owns it from then on, and so does the
     * caller when that successor is a leaf. Successors' results are stored before they succeed,
     * and all of them have ended when the count reaches zero.
     */
    private boolean passedOn(int p, Releasable r) {
        for (int k = topology.successorStart(p), stop = topology.successorEnd(p); k < stop; k++) {
            int s = topology.successor(k);
            if (run.deps.is(s, TaskState.SUCCEEDED) && run.resultOf(s) == r) {
                return true;
            }
        }
        return false;
    }

    /**
     * Releases the result of an attempt that reaches nobody (its task was cancelled while it ran,
     * it is retried, it returned after its time-out), unless it is one of the task's inputs passed
     * through: that one still belongs to its producer's lifetime.
     */
    static void releaseUnread(Releasable r, GraphRun run, int i) {
        GraphTopology t = run.topology;
        for (int k = t.predecessorStart(i), stop = t.predecessorEnd(i); k < stop; k++) {
            if (run.resultOf(t.predecessor(k)) == r) {
                return;
            }
        }
        release(r, run, i);
    }

    /** Releases a result; a failing release is logged, never thrown into the run's bookkeeping. */
    static void release(Releasable r, GraphRun run, int i) {
        try {
            UserCode.run(run.scheduler, r::release);
        } catch (Throwable ex) {
            Propagation.warn(
                    "Releasing the result of task '" + run.topology.name(i) + "' in run " + run.runId() + " failed",
                    ex);
        }
    }
}
