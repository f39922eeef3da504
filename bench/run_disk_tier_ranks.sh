#!/usr/bin/env bash
# bench/run_disk_tier_ranks.sh — snapshot files across MPI ranks: one file per rank against one
# file shared by every rank (parallel HDF5), on a Gray–Scott gradient at 10^6 unknowns.
#
#   bench/run_disk_tier_ranks.sh                      # 2 ranks, n = 708, 200 steps, 10 snapshots
#   RANKS=4 DIR=/scratch bench/run_disk_tier_ranks.sh --steps 400
#
# Builds bench/distributed_disk_tier_bench (needs an MPI build) and runs it twice under mpiexec:
# with MPI_THREAD_FUNNELED (the default: a shared file is written on the driver's thread) and
# with MPI_THREAD_MULTIPLE (a shared file too is written behind on the I/O thread). Each run
# prints both layouts side by side, their write/read/wait seconds, the ratio, and whether every
# gradient is the same bits. Extra arguments go to the bench program.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
JOBS="${JOBS:-2}"
RANKS="${RANKS:-2}"
DIR="${DIR:-${TMPDIR:-/tmp}}"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
if ! grep -q '^REWIND_WITH_MPI:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  echo "run_disk_tier_ranks.sh: rewind was built without MPI" >&2
  exit 1
fi
cmake --build "$BUILD_DIR" --target distributed_disk_tier_bench -j "$JOBS" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
for level in "" --thread-multiple; do
  mpiexec -n "$RANKS" --oversubscribe "$BUILD_DIR/bench/distributed_disk_tier_bench" \
    --n 708 --steps 200 --snapshots 10 --repeats 2 --dir "$DIR" $level "$@"
  echo
done
