#!/usr/bin/env bash
# bench/gpu/prepare_carry.sh — copy what a GPU machine lacks into bench/gpu/carry (git-ignored),
# so that bench/gpu/build_on_device.sh can build rewind's device core there.
#
#   bench/gpu/prepare_carry.sh          # here, on the machine with Debian's -dev packages
#   # then, on the GPU machine, with bench/gpu/carry carried beside the working tree:
#   bench/gpu/build_on_device.sh
#
# The GPU machine has the CUDA toolkit (nvcc 13 with its own Thrust/CUB), CMake and ninja, but no
# Debian -dev packages. The device core build needs, besides those, four header-only or
# source-only pieces, taken from this machine's Debian packages:
#   carry/prefix/include/eigen3 + carry/prefix/share/eigen3/cmake   Eigen 3.4 (libeigen3-dev),
#       with its CMake package files, which find the headers relative to their own location;
#   carry/prefix/include/Random123                                  Philox (librandom123-dev);
#   carry/prefix/include/xxhash.h                                   XXH3 (libxxhash-dev);
#   carry/googletest                                                GoogleTest's sources
#       (googletest), built there as part of the project (REWIND_GTEST_SOURCE_DIR).
# About 14 MB in all. Google Benchmark is not needed: bench/gpu's programs are plain programs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
carry=$here/carry
rm -rf "$carry"
mkdir -p "$carry/prefix/include" "$carry/prefix/share/eigen3"

need() {
  [ -e "$1" ] || { echo "prepare_carry: $1 is missing; run scripts/install_dependencies.sh" >&2; exit 1; }
}
need /usr/include/eigen3/Eigen/Core
need /usr/share/eigen3/cmake/Eigen3Config.cmake
need /usr/include/Random123/philox.h
need /usr/include/xxhash.h
need /usr/src/googletest/CMakeLists.txt

cp -r /usr/include/eigen3 "$carry/prefix/include/"
cp -r /usr/share/eigen3/cmake "$carry/prefix/share/eigen3/"
cp -r /usr/include/Random123 "$carry/prefix/include/"
cp /usr/include/xxhash.h "$carry/prefix/include/"
cp -r /usr/src/googletest "$carry/googletest"
echo "prepare_carry: $(du -sh "$carry" | cut -f1) in $carry; carry the path bench/gpu/carry"
