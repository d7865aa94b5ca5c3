#!/usr/bin/env bash
# Regenerates the PTX of HTS's built-in kernels from hts_kernels.cu (needs nvcc; no GPU needed).
set -euo pipefail
cd "$(dirname "$0")"
nvcc -ptx -arch=compute_80 -O3 -o ../resources/io/hts/gpu/kernel/hts_kernels.ptx hts_kernels.cu
echo "wrote hts-gpu/src/main/resources/io/hts/gpu/kernel/hts_kernels.ptx"
