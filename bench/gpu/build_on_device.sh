#!/usr/bin/env bash
# bench/gpu/build_on_device.sh — configure and build rewind's device core on a GPU machine that
# has only the CUDA toolkit, CMake and ninja (no HDF5, SUNDIALS, MPI, Eigen or GoogleTest
# packages), then list what was built.
#
#   bench/gpu/prepare_carry.sh                        # first, on the development machine
#   bench/gpu/build_on_device.sh [build-dir] [ninja targets…]
#   build-device/tests/thrust_gradient_cuda_test      # the gradient tests, on the device
#   build-device/bench/gpu/gray_scott_roofline        # the roofline benchmark (table + JSON)
#
# Paths that must travel to the GPU machine besides the working tree: bench/gpu/carry (made by
# prepare_carry.sh: Eigen, Random123, xxhash headers and GoogleTest's sources, ~14 MB). Nothing
# else is needed there: nvcc and the toolkit's Thrust/CUB (include/cccl) come with CUDA, which is
# also where the CPU (CPP device system) targets take their Thrust headers from.
#
# The configure turns HDF5, SUNDIALS and MPI off (the device core build, see the top-level
# CMakeLists.txt): the core and Thrust targets, schedules, memory stores, Runge–Kutta steppers,
# problems and adjoint drivers; the Thrust CPU and *_cuda_test.cu tests; bench/gpu. nvcc builds
# for the GPU it finds (CMAKE_CUDA_ARCHITECTURES=native), else for Hopper (90).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/bench/gpu/carry
build=${1:-$root/build-device}
shift || true

if [ ! -d "$carry/prefix/include/eigen3" ] || [ ! -f "$carry/googletest/CMakeLists.txt" ]; then
  echo "build_on_device: $carry is incomplete; run bench/gpu/prepare_carry.sh where the Debian" \
       "packages are, and carry bench/gpu/carry" >&2
  exit 1
fi
if ! command -v nvcc >/dev/null; then export PATH=/usr/local/cuda/bin:$PATH; fi
cuda_root=$(dirname "$(dirname "$(command -v nvcc)")")
arch=90
if command -v nvidia-smi >/dev/null && nvidia-smi >/dev/null 2>&1; then arch=native; fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREWIND_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES=$arch \
  -DREWIND_WITH_HDF5=OFF -DREWIND_WITH_SUNDIALS=OFF -DREWIND_WITH_MPI=OFF \
  -DREWIND_THRUST_INCLUDE_DIR="$cuda_root/include/cccl" \
  -DCMAKE_PREFIX_PATH="$carry/prefix" \
  -DREWIND_GTEST_SOURCE_DIR="$carry/googletest"
ninja -C "$build" -j"$(nproc)" "$@"
ls "$build"/tests/*_test "$build"/bench/gpu/* 2>/dev/null | grep -v CMakeFiles || true
