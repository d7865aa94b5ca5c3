/**
 * Streams: the per-device {@link io.hts.gpu.stream.StreamManager} and its leases.
 */
@NullMarked
package io.hts.gpu.stream;

import org.jspecify.annotations.NullMarked;
