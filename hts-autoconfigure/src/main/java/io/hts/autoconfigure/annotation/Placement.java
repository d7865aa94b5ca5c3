package io.hts.autoconfigure.annotation;

/** Where an {@link HtsTask} method may run. */
public enum Placement {

    /** On the CPU's work-stealing pool. */
    CPU,

    /** On a GPU: the method is the task's GPU body (it may take a {@code GpuContext}). */
    GPU,

    /**
     * On either, as the scheduling policy decides: the method is both bodies and may ask its
     * {@code TaskContext} which device it is on.
     */
    ANY
}
