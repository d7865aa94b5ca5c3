// Test-only kernels for GpuStickyErrorDeviceTests (regenerate: nvcc -ptx -arch=compute_80 -o faults.ptx faults.cu).
// Writes through a pointer the test makes invalid, which the device reports as CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void hts_test_write_to(float* target)
{
    target[threadIdx.x] = 1.0f;
}
