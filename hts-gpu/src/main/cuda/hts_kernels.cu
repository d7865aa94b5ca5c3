// HTS's built-in kernels. The PTX beside the Java code is generated from this file:
//   nvcc -ptx -arch=compute_80 -O3 -o ../resources/io/hts/gpu/kernel/hts_kernels.ptx hts_kernels.cu
// (hts-gpu/src/main/cuda/regenerate-ptx.sh). compute_80 PTX is JIT-compiled by the driver for
// any newer GPU (sm_90 H100/H200 included). All kernels use grid-stride loops, so any grid size
// covers any n.

extern "C" __global__ void hts_axpy_f32(long long n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void hts_scale_f32(long long n, float a, float* __restrict__ x)
{
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) blockDim.x * gridDim.x) {
        x[i] *= a;
    }
}

extern "C" __global__ void hts_fill_f32(long long n, float value, float* __restrict__ x)
{
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) blockDim.x * gridDim.x) {
        x[i] = value;
    }
}

// Adds the sum of x[0, n) to *out (which the caller zeroes first): each thread sums a grid-stride
// slice, warps reduce with shuffles, one atomicAdd per warp. blockDim.x must be a multiple of 32.
extern "C" __global__ void hts_sum_f32(long long n, const float* __restrict__ x, float* __restrict__ out)
{
    float sum = 0.0f;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) blockDim.x * gridDim.x) {
        sum += x[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, sum);
    }
}
