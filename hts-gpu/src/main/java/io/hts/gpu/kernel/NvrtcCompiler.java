package io.hts.gpu.kernel;

import jcuda.nvrtc.JNvrtc;
import jcuda.nvrtc.nvrtcProgram;
import jcuda.nvrtc.nvrtcResult;

/**
 * CUDA C to PTX through NVRTC (JCuda's {@code JNvrtc}). JCuda 12.6.0 links
 * {@code libnvrtc.so.12}: on a machine with only CUDA 13 it loads after its natives are
 * retargeted ({@code hts-gpu/scripts/jcuda-cuda13.sh}, see docs/gpu.md); until then
 * {@link #load()} fails with a message that says so, and everything else in HTS still works.
 */
final class NvrtcCompiler {

    private NvrtcCompiler() {}

    static NvrtcCompiler load() {
        try {
            JNvrtc.setExceptionsEnabled(false);
            int[] version = new int[2];
            JNvrtc.nvrtcVersion(version, new int[1]);
        } catch (LinkageError ex) {
            throw new IllegalStateException(
                    "NVRTC could not be loaded (" + ex.getMessage() + "). JCuda 12.6.0 needs"
                            + " libnvrtc.so.12; on a CUDA 13 machine retarget its natives to libnvrtc.so.13 with"
                            + " hts-gpu/scripts/jcuda-cuda13.sh (docs/gpu.md), or compile to PTX ahead of time with nvcc and"
                            + " use GpuContext.kernel(ptx, name)",
                    ex);
        }
        return new NvrtcCompiler();
    }

    String compile(String source, String fileName, String architecture) {
        nvrtcProgram program = new nvrtcProgram();
        check("nvrtcCreateProgram", JNvrtc.nvrtcCreateProgram(program, source, fileName, 0, null, null));
        try {
            int result = JNvrtc.nvrtcCompileProgram(program, 2, new String[] {"--std=c++17", architecture});
            if (result != nvrtcResult.NVRTC_SUCCESS) {
                String[] log = new String[1];
                JNvrtc.nvrtcGetProgramLog(program, log);
                throw new KernelCompilationException(
                        "NVRTC could not compile " + fileName + ": " + nvrtcResult.stringFor(result) + "\n" + log[0]);
            }
            String[] ptx = new String[1];
            check("nvrtcGetPTX", JNvrtc.nvrtcGetPTX(program, ptx));
            return ptx[0];
        } finally {
            JNvrtc.nvrtcDestroyProgram(program);
        }
    }

    private static void check(String call, int result) {
        if (result != nvrtcResult.NVRTC_SUCCESS) {
            throw new KernelCompilationException(call + " failed: " + nvrtcResult.stringFor(result));
        }
    }
}
