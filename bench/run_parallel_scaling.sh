#!/usr/bin/env bash
# bench/run_parallel_scaling.sh — threads against one core on a Gray–Scott gradient, as a table.
#
#   bench/run_parallel_scaling.sh                         # build (Release) if needed, run, print
#   bench/run_parallel_scaling.sh --n 708 --steps 400     # extra arguments go to the script
#
# Builds the rewind tool and runs bench/parallel_scaling.py: the same gradient with 1 and 2
# threads, each in its own process, the fastest of three; speed-ups of the forward sweep and of
# the gradient, peak RSS, and a check that every gradient is the same bits and the field alive.
# Built with MPI, also 1 and 2 ranks (bench/distributed_gray_scott_bench under mpiexec).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
JOBS="${JOBS:-2}"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" --target rewind_cli -j "$JOBS" >/dev/null
ranks=()
if grep -q '^REWIND_WITH_MPI:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  cmake --build "$BUILD_DIR" --target distributed_gray_scott_bench -j "$JOBS" >/dev/null
  ranks=(--distributed-bench "$BUILD_DIR/bench/distributed_gray_scott_bench")
fi
python3 "$REPO/bench/parallel_scaling.py" --rewind "$BUILD_DIR/src/cli/rewind" "${ranks[@]}" "$@"
