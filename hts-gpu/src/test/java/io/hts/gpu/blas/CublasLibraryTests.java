package io.hts.gpu.blas;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Where cuBLAS cannot load (no driver, CUDA 13 only), the reason names what is missing and the fix. */
class CublasLibraryTests {

    @Test
    void loadingEitherSucceedsOrSaysHowToFixIt() {
        try {
            CublasLibrary.load(1).close(); // a machine with CUDA 12, or retargeted natives
        } catch (IllegalStateException ex) {
            assertThat(ex)
                    .hasMessageContaining("cuBLAS could not be loaded")
                    .hasMessageContaining("JCuda 12.6.0 needs libcublas.so.12")
                    .hasMessageContaining("hts-gpu/scripts/jcuda-cuda13.sh")
                    .hasMessageContaining("GPU tasks that do not use cuBLAS still run");
        }
    }

    @Test
    void gemmFlopsAreTwoMnk() {
        assertThat(Blas.gemmFlops(8192, 8192, 8192)).isEqualTo(2.0 * 8192 * 8192 * 8192);
        assertThat(Blas.Precision.BF16.elementBytes()).isEqualTo(2);
        assertThat(Blas.Precision.TF32.elementBytes()).isEqualTo(4);
    }
}
