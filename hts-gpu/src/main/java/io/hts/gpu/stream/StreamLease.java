package io.hts.gpu.stream;

import io.hts.gpu.cuda.CudaApi;

/**
 * A stream of a {@link StreamManager}, held by one GPU task from its start until its device work
 * has completed.
 *
 * @param lane the stream's index in its manager, the task's lane in events and traces
 * @param stream the CUDA stream
 */
public record StreamLease(int lane, CudaApi.Stream stream) {}
