#!/usr/bin/env bash
# What moving snapshots to disk costs: memory-only vs disk with background I/O vs disk inline, on
# the same problem and schedule, interleaved rounds; then the snapshot file's bandwidth against
# plain write(2)/read(2) of the same bytes in the same directory. Two sizes: 1 MiB states with 4
# RAM + 32 disk snapshots, and 4 MiB states with 2 + 64. About 8 minutes on 2 cores.
#
#   bench/run_disk_offload.sh                    # temporary directory of the system
#   DISK=/scratch BUILD_DIR=$PWD/build-bench bench/run_disk_offload.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-$PWD/build}
DISK=${DISK:-${TMPDIR:-/tmp}}
if [[ ! -x $BUILD_DIR/bench/disk_offload_bench ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DREWIND_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target disk_offload_bench
fi
"$BUILD_DIR/bench/disk_offload_bench" --n 256 --steps 3000 --memory 4 --disk 32 --repeat 3 --dir "$DISK"
echo
"$BUILD_DIR/bench/disk_offload_bench" --n 512 --steps 1000 --memory 2 --disk 64 --repeat 3 --dir "$DISK"
