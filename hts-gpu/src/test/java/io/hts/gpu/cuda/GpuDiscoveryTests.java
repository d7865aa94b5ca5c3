package io.hts.gpu.cuda;

import io.hts.gpu.support.SimulatedCuda;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Discovery never throws: every way of having no GPU gives a reason. */
class GpuDiscoveryTests {

    @Test
    void missingJCudaNativesDriverOrDevicesEachGiveAReason() {
        assertThat(GpuDiscovery.discover(() -> {
            throw new NoClassDefFoundError("jcuda/driver/JCudaDriver");
        }).reason()).startsWith("JCuda is not on the class path");
        assertThat(GpuDiscovery.discover(() -> {
            throw new UnsatisfiedLinkError("libcuda.so.1: cannot open shared object file");
        }).reason()).contains("could not be loaded", "libcuda.so.1", "is an NVIDIA driver installed");
        assertThat(GpuDiscovery.discover(() -> {
            throw new CudaException("cuInit(0)", 100, "CUDA_ERROR_NO_DEVICE");
        }).reason()).contains("refused to start", "CUDA_ERROR_NO_DEVICE");
        assertThat(GpuDiscovery.discover(() -> new SimulatedCuda(1 << 20).withDevices(0)).reason())
                .isEqualTo("the CUDA driver reports no device");
    }

    /** JCuda's loading report is many lines; the reason keeps the linker error that says what is missing. */
    @Test
    void jcudasLoadingReportIsCutToTheLinkerError() {
        String report = "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                + "Operating system name: Linux\n---(start of nested stack traces)---\n"
                + "java.lang.UnsatisfiedLinkError: no JCudaDriver-12.6.0-linux-x86_64 in java.library.path: /usr/lib\n"
                + "java.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file\n"
                + "---(end of nested stack traces)---";
        String reason = GpuDiscovery.discover(() -> {
            throw new UnsatisfiedLinkError(report);
        }).reason();
        assertThat(reason).contains("/tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file")
                .doesNotContain("\n").doesNotContain("Operating system");
    }

    @Test
    void aWorkingDriverListsItsDevices() {
        GpuDiscovery.Result r = GpuDiscovery.discover(() -> new SimulatedCuda(1L << 30));
        assertThat(r.available()).isTrue();
        assertThat(r.devices()).hasSize(1);
        assertThat(r.describe()).isEqualTo("1 CUDA device(s), driver CUDA 13.0: [cuda:0 Simulated GPU (sm_90, 4 SMs, 1.0 GiB)]");
    }

    /** On a machine without a GPU (CI, the development box) the real discovery says why, and returns. */
    @Test
    void theRealDiscoveryNeverThrows() {
        GpuDiscovery.Result r = GpuDiscovery.discover();
        if (!r.available()) {
            assertThat(r.reason()).isNotBlank();
            assertThat(r.describe()).startsWith("GPU unavailable: ");
        }
    }

    @Test
    void errorsAreClassifiedForTheScheduler() {
        assertThat(CudaErrorKind.of(2)).isEqualTo(CudaErrorKind.OUT_OF_MEMORY);
        assertThat(CudaErrorKind.of(2).isRetryable()).isTrue();
        assertThat(CudaErrorKind.of(700)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(719)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(214)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(100)).isEqualTo(CudaErrorKind.UNAVAILABLE);
        assertThat(CudaErrorKind.of(35)).isEqualTo(CudaErrorKind.UNAVAILABLE);
        assertThat(CudaErrorKind.of(1)).isEqualTo(CudaErrorKind.OTHER);
        assertThat(CudaErrorKind.of(700).isRetryable()).isFalse();
        CudaException e = new CudaException("cuMemAlloc(1024)", 2, "CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(e).hasMessage("cuMemAlloc(1024) failed: CUDA_ERROR_OUT_OF_MEMORY (2)");
        assertThat(e.kind()).isEqualTo(CudaErrorKind.OUT_OF_MEMORY);
    }
}
