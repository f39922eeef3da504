#!/usr/bin/env bash
# bench/gpu/bundle_binaries.sh — pack rewind's CUDA programs, built here by the full build
# (HDF5, so the disk level too), with the shared libraries they need, for a GPU machine that has
# the NVIDIA driver but none of Debian's -dev packages: bench/gpu/bundle/rewind-gpu.tar.xz
# (git-ignored, about 15 MB).
#
#   cmake --build build --target rewind_cli gray_scott_roofline gray_scott_roofline_cpu \
#       neural_ode_gpu_bench neural_ode_gpu_bench_cpu \
#       thrust_gradient_cuda_test three_level_cuda_test drift_monitor_cuda_test \
#       backend_conformance_cuda_test device_neural_ode_cuda_test cvodes_device_vector_cuda_test \
#       thrust_device_errors_cuda_test thrust_fixed_reduction_cuda_test
#   bench/gpu/bundle_binaries.sh [build]
#   # on the GPU machine, with bench/gpu/bundle carried beside the working tree:
#   bench/gpu/device_checks.sh        # unpacks it, runs the tests and benchmarks into $OUT
#
# The programs were compiled by nvcc for sm_90 (the H100; CMAKE_CUDA_ARCHITECTURES) with the CUDA
# runtime linked statically, so the GPU machine's driver is all they need of CUDA. glibc itself is
# not packed: the GPU machine's own (which must be at least this machine's, 2.36) is used.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
out=$root/bench/gpu/bundle
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$out"
programs=(src/cli/rewind bench/gpu/gray_scott_roofline bench/gpu/gray_scott_roofline_cpu
          bench/gpu/neural_ode_gpu_bench bench/gpu/neural_ode_gpu_bench_cpu
          tests/thrust_gradient_cuda_test tests/three_level_cuda_test tests/drift_monitor_cuda_test
          tests/backend_conformance_cuda_test tests/thrust_device_errors_cuda_test
          tests/thrust_fixed_reduction_cuda_test tests/device_neural_ode_cuda_test
          tests/cvodes_device_vector_cuda_test)
for p in "${programs[@]}"; do
  [ -x "$build/$p" ] || { echo "bundle_binaries: $build/$p is not built" >&2; exit 1; }
  cp "$build/$p" "$stage/bin/"
  strip "$stage/bin/$(basename "$p")"
done
# Every shared library the programs load, except glibc's own and the dynamic loader.
for p in "$stage"/bin/*; do ldd "$p"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar -C "$stage" -cJf "$out/rewind-gpu.tar.xz" bin lib
echo "bundle_binaries: $(du -h "$out/rewind-gpu.tar.xz" | cut -f1) in $out/rewind-gpu.tar.xz" \
     "($(ls "$stage/bin" | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries)"
