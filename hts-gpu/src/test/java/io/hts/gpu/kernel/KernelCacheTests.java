package io.hts.gpu.kernel;

import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.support.SimulatedCuda;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KernelCacheTests {

    private final SimulatedCuda cuda = new SimulatedCuda(1 << 20);
    private final KernelCache cache = new KernelCache(cuda, cuda.deviceInfo(0));

    @Test
    void theBuiltInPtxShipsInTheJarWithEveryBuiltInKernel() {
        String ptx = KernelCache.builtinPtx();
        assertThat(ptx).contains(".target sm_80", ".visible .entry hts_axpy_f32", ".visible .entry hts_scale_f32",
                ".visible .entry hts_fill_f32", ".visible .entry hts_sum_f32");
    }

    @Test
    void aKernelIsLoadedOncePerModuleAndNameAndReused() {
        Kernel a = cache.builtin("hts_axpy_f32");
        Kernel again = cache.builtin("hts_axpy_f32");
        Kernel other = cache.builtin("hts_fill_f32");
        assertThat(again).isSameAs(a);
        assertThat(other).isNotSameAs(a);
        assertThat(a.name()).isEqualTo("hts_axpy_f32");
        assertThat(a.device()).isZero();
    }

    @Test
    void anUnknownKernelNameIsTheDriversError() {
        assertThatThrownBy(() -> cache.builtin("no_such_kernel")).isInstanceOf(CudaException.class)
                .hasMessageContaining("cuModuleGetFunction(no_such_kernel)").hasMessageContaining("CUDA_ERROR_NOT_FOUND");
    }
}
