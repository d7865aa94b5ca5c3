package io.hts.engine.run.internal;

/**
 * An extension's part of one graph on one scheduler: which tasks it owns, and its part of each run.
 * Made once per graph by {@link SchedulerExtension#graph}; immutable (shared by every run of the
 * graph, on any thread).
 */
public interface GraphExtension {

    /**
     * Whether the extension owns task {@code i}: its attempts go to {@link RunExtension#ready} and
     * {@link RunExtension#retry} instead of a device of this scheduler. Asked once per task, while
     * the execution plan is made (the thread and lock of {@link SchedulerExtension#graph}); the
     * kernel keeps the answer in the plan and never asks on the per-task path.
     *
     * @param i the task's index
     * @return whether the extension owns it
     */
    boolean owns(int i);

    /**
     * The extension's part of a new run, made once per run in the run's constructor (the thread
     * that submits it), before any of its tasks is ready.
     *
     * @param run the kernel's view of the run
     * @return the run's part
     */
    RunExtension run(RunHandle run);
}
