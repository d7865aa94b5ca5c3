package io.hts.engine.graph;

/** The kinds of device a task body can run on. */
public enum Device {

    /** The CPU cores, through HTS's work-stealing pool. */
    CPU,

    /** A CUDA GPU, through the GPU execution backend (module {@code hts-gpu}). */
    GPU;

    /** The lower-case name used in configuration, events and traces ({@code cpu}, {@code gpu}). */
    public String id() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
