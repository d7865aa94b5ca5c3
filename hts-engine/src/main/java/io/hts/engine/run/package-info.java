/**
 * The run kernel: the {@link io.hts.engine.run.Scheduler} and its runs ({@link
 * io.hts.engine.run.GraphRun}): how every task of a run reaches exactly one final state, and what
 * each step costs. Cluster distribution is not here ({@code io.hts.engine.cluster.internal}, through
 * the hooks of {@code io.hts.engine.run.internal}); the worker pool is {@code exec.internal}; events
 * and profiles are {@code observe}.
 *
 * <h2>The kernel's invariants</h2>
 *
 * <ol>
 *   <li><b>One word per task, one compare-and-set per transition</b> ({@code DependencyManager}):
 *       a task's state and its count of dependencies not yet done share one int per run; CREATED to
 *       READY happens once, by the decrement that takes the count to zero; READY to RUNNING once,
 *       by the attempt that wins it; the final states are absorbing. Nobody writes a state it does
 *       not own: cancellers move only tasks that have not started, and ask running ones to stop.
 *   <li><b>The winner does the duties</b> ({@code Propagation}): the thread whose compare-and-set
 *       made a task final, and only it, stores the result or cause, publishes the event, completes
 *       the watchers, makes successors ready or cancels descendants, and counts the task once.
 *   <li><b>The run ends exactly once, never early</b> ({@code RunState}): a count of tasks not yet
 *       final, to which every winner contributes once after its duties (a worker batches its
 *       contributions and flushes them before it idles, waits or runs another run's work); the
 *       contribution that reaches zero finishes the run.
 *   <li><b>One attempt owns its outcome</b> ({@code TaskExecution}): a body's return, its time-out
 *       and its device's report race by one compare-and-set; the interrupt of a body is arbitrated
 *       by its own phase word ({@code InterruptibleBody}), so an interrupt never reaches a later task.
 *   <li><b>Tasks added while the run runs</b> ({@code DynamicTasks}, {@code DynamicNode}) follow the
 *       same state machine with their own word, join counter and successor list; an edge added to a
 *       task that is finishing is decided by one compare-and-set against its end; the adder reserves
 *       the new task in the run's count before it is visible, which is legal only while it holds an
 *       unfinished task of the run, so a finished run stays finished.
 * </ol>
 *
 * <h2>A task's path, and what it costs</h2>
 *
 * <p>A worker pops (or is handed, as its continuation) a {@code TaskExecution}; {@code Attempts}
 * wins READY to RUNNING (or, for a task whose only dependency just ended on this worker, counts that
 * dependency and starts in the same compare-and-set), runs the body, and {@code Propagation} ends
 * it: one compare-and-set to SUCCEEDED, one per successor edge, the first successor made ready run
 * next on the same worker, the others pushed on its deque. Per task on a CPU-only graph: one
 * object (the attempt: queue entry, device task and the body's context at once), three
 * compare-and-sets (start, the body's interrupt phase, end) and one per edge; with profiling on,
 * one clock read (a task's end is the next task's start on a busy worker) and its slots in the
 * run's timing arrays. Nothing else is asked per task when unused: GPU placement, resources,
 * retries, time limits, urgent lanes and distribution are flags of the graph's {@code
 * ExecutionPlan}, computed once per graph and scheduler; listeners are asked for by event type,
 * through a volatile flag of the event bus; dynamic tasks cost a null field, read only where a
 * dynamic task could matter. docs/architecture.md draws the layers; docs/benchmarks.md measures
 * the path against Taskflow and oneTBB ({@code hts-benchmarks/scripts/kernel-gate.sh}).
 */
@NullMarked
package io.hts.engine.run;

import org.jspecify.annotations.NullMarked;
