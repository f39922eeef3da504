#!/usr/bin/env bash
# Builds rewind with sanitizers in a build directory of its own and runs the default test suite
# (ctest -LE long) there. Any sanitizer finding fails the test that made it.
#
#   scripts/sanitize.sh address     # AddressSanitizer + LeakSanitizer + UBSan, in build-asan/
#   scripts/sanitize.sh thread      # ThreadSanitizer, in build-tsan/ (OpenMP off: see CMakeLists.txt)
#   scripts/sanitize.sh address -R 'snapshot|revolve'   # further arguments go to ctest
#
# g++ by default (CXX=clang++-14 for clang); -O1 -g, NDEBUG as in Release. CUDA, the benchmarks
# and the installed-package test are left out. REWIND_SANITIZE_CMAKE_ARGS adds configure
# arguments (e.g. "-DREWIND_WITH_MPI=OFF"). The runtime options and suppression files are in
# tests/sanitizers/ (each suppression file says why each entry is there).
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
case "$kind" in
  address) build=build-asan; sanitize=address,undefined ;;
  thread) build=build-tsan; sanitize=thread ;;
  *)
    echo "usage: scripts/sanitize.sh address|thread [ctest arguments]" >&2
    exit 2
    ;;
esac
shift
jobs=$(nproc)

bash scripts/install_dependencies.sh
# shellcheck disable=SC2086  # REWIND_SANITIZE_CMAKE_ARGS is a list of words
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="${CXX:-g++}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG" -DREWIND_SANITIZE="$sanitize" \
  ${REWIND_SANITIZE_CMAKE_ARGS:-}
cmake --build "$build" -j"$jobs"

source tests/sanitizers/options.sh
ctest --test-dir "$build" --output-on-failure -LE long -j"$jobs" "$@"
