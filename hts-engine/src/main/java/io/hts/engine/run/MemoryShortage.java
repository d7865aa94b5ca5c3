package io.hts.engine.run;

/**
 * What a task that has CPU and GPU bodies does when it is placed on the GPU but the GPU memory it
 * declares ({@code resource("gpu-memory", bytes)}) is not free.
 */
public enum MemoryShortage {

    /** It waits for the memory (the default); the GPU stays its device. */
    WAIT,

    /** It runs its CPU body now (an event says why); tasks with only a GPU body still wait. */
    RUN_ON_CPU
}
