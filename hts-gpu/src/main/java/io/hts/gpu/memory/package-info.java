/**
 * Device memory: the pure-Java {@link io.hts.gpu.memory.BuddyAllocator}, the device memory pool
 * of arenas it manages, device buffers and the pinned host staging pool.
 */
@NullMarked
package io.hts.gpu.memory;

import org.jspecify.annotations.NullMarked;
