package io.hts.engine.graph;

/**
 * The context a {@link GpuBody} receives. The GPU backend provides the implementation; its richer
 * API (streams, device memory, cuBLAS) is reached through {@link #unwrap(Class)}.
 */
public interface GpuTaskContext extends TaskContext {

    /** The ordinal of the GPU the body runs on. */
    int deviceOrdinal();

    /**
     * The backend's own context type.
     *
     * @param type the type to unwrap to
     * @param <C> the type
     * @return this context as that type
     * @throws IllegalArgumentException when the backend's context is not of that type
     */
    <C> C unwrap(Class<C> type);
}
