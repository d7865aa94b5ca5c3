package io.hts.gpu.cuda;

/**
 * A CUDA device as discovery sees it.
 *
 * @param ordinal its number, from 0
 * @param name e.g. {@code NVIDIA H200}
 * @param totalMemory bytes of device memory
 * @param computeMajor compute capability, major (9 for Hopper)
 * @param computeMinor compute capability, minor
 * @param multiprocessors streaming multiprocessors
 */
public record DeviceInfo(
        int ordinal, String name, long totalMemory, int computeMajor, int computeMinor, int multiprocessors) {

    /** {@code cuda:0 NVIDIA H200 (sm_90, 132 SMs, 140.4 GiB)}. */
    @Override
    public String toString() {
        return "cuda:" + ordinal + " " + name + " (sm_" + computeMajor + computeMinor + ", " + multiprocessors
                + " SMs, " + io.hts.gpu.memory.MemoryStatistics.bytes(totalMemory) + ")";
    }
}
