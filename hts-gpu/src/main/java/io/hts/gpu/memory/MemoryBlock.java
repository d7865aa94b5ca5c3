package io.hts.gpu.memory;

/**
 * A block handed out by a {@link BuddyAllocator}: {@code size} bytes at {@code offset} from the
 * start of the allocator's address range. Give it back with {@link BuddyAllocator#free}, once.
 *
 * @param allocator the allocator it belongs to
 * @param offset its offset in the allocator's range, a multiple of its size
 * @param size its size: the minimum block times a power of two
 * @param requested the bytes asked for ({@code size - requested} is internal fragmentation)
 * @param order log2(size / minimum block)
 */
public record MemoryBlock(BuddyAllocator allocator, long offset, long size, long requested, int order) {

    @Override
    public String toString() {
        return "block[" + offset + ", +" + size + ") for " + requested + " bytes";
    }
}
