#!/usr/bin/env bash
# Makes JCuda 12.6.0's cuBLAS and NVRTC bindings load on a machine that has only CUDA 13.
#
#   hts-gpu/scripts/jcuda-cuda13.sh [OUTPUT_DIR] [JAR...]
#
# JCuda 12.6.0's JNI libraries link libcublas.so.12 and libnvrtc.so.12. CUDA 13 ships
# libcublas.so.13 and libnvrtc.so.13 with the same C API for what JCuda calls. This script
# extracts the natives from the JCuda natives jars (by default those of the local Maven
# repository), points their DT_NEEDED entries at the .so.13 names (patchelf) and retargets their
# ELF version requirements (retarget-verneed.py). Then start the JVM with
#   -Djava.library.path=OUTPUT_DIR
# and put CUDA 13's libraries on LD_LIBRARY_PATH (e.g. /usr/local/cuda/lib64). The driver-API
# library (libJCudaDriver) needs only libcuda.so.1 and is copied unchanged. See docs/gpu.md.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-jcuda-cuda13-natives}"
shift || true
JARS=("$@")
if [[ ${#JARS[@]} -eq 0 ]]; then
  REPO="${MAVEN_REPOSITORY:-$HOME/.m2/repository}"
  JARS=("$REPO"/org/jcuda/jcuda-natives/12.6.0/jcuda-natives-12.6.0-linux-x86_64.jar
        "$REPO"/org/jcuda/jcublas-natives/12.6.0/jcublas-natives-12.6.0-linux-x86_64.jar)
fi
command -v patchelf >/dev/null || { echo "patchelf is needed (apt-get install patchelf)" >&2; exit 1; }
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for jar in "${JARS[@]}"; do
  [[ -f "$jar" ]] || { echo "no such jar: $jar (build hts-gpu first, or name the jars)" >&2; exit 1; }
  unzip -q -o "$jar" 'lib/*.so' -d "$tmp"
done
for so in "$tmp"/lib/*.so; do
  target="$OUT/$(basename "$so")"
  cp "$so" "$target"
  for lib in $(readelf -d "$target" | sed -n 's/.*Shared library: \[\(lib[a-zA-Z]*\)\.so\.12\]/\1/p'); do
    patchelf --replace-needed "$lib.so.12" "$lib.so.13" "$target"
    python3 "$HERE/retarget-verneed.py" "$target" "$lib.so.12" "$lib.so.13"
  done
done
echo "JCuda natives for CUDA 13 in $OUT: run java with -Djava.library.path=$OUT"
