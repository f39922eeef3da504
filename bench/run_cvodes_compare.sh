#!/usr/bin/env bash
# rewind's checkpointed BDF adjoint against CVODES's own adjoint (bench/cvodes_adjoint_compare.cpp)
# on the 2D Brusselator for horizons growing x10 and x100: peak RSS, wall time, gradient agreement.
# Each variant runs in its own process. ~5 minutes at the defaults (2048 unknowns, intervals of 20
# time units, revolve(20)).
#   N=16 INTERVAL=5 SNAPSHOTS=4 bench/run_cvodes_compare.sh     # the first, tighter setting
#
#   bench/run_cvodes_compare.sh
#   N=32 HORIZONS="10 100" INTERVAL=5 SNAPSHOTS=4 bench/run_cvodes_compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-$PWD/build}
N=${N:-32}
HORIZONS=${HORIZONS:-"10 100 1000"}
INTERVAL=${INTERVAL:-20}
SNAPSHOTS=${SNAPSHOTS:-20}
if [[ ! -x $BUILD_DIR/bench/cvodes_adjoint_compare ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DREWIND_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target cvodes_adjoint_compare
fi
out=$BUILD_DIR/cvodes_compare.jsonl
: > "$out"
for T in $HORIZONS; do
  "$BUILD_DIR/bench/cvodes_adjoint_compare" --variant cvodes --horizon "$T" --n "$N" >> "$out"
  "$BUILD_DIR/bench/cvodes_adjoint_compare" --variant rewind --horizon "$T" --n "$N" \
      --interval "$INTERVAL" --snapshots "$SNAPSHOTS" >> "$out"
done
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mib = 1 << 20
print(f"Brusselator {rows[0]['n']}x{rows[0]['n']} ({rows[0]['unknowns']} unknowns), band BDF, rtol 1e-6")
print("| horizon | CVODES adjoint: peak RSS (above start) | time | rewind: intervals, revolve | peak RSS (above start) | time | time ratio | gradient rel. difference |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for c, r in zip(rows[0::2], rows[1::2]):
    g0, g1 = c["grad_theta"], r["grad_theta"]
    diff = sum((a - b) ** 2 for a, b in zip(g0, g1)) ** 0.5 / sum(a * a for a in g0) ** 0.5
    print(f"| {c['horizon']:g} | {c['peak_rss_bytes'] / mib:.1f} MiB ({(c['peak_rss_bytes'] - c['rss_before_bytes']) / mib:.1f}) "
          f"| {c['seconds']:.1f} s | {r['intervals']}, revolve({r['snapshots']}) "
          f"| {r['peak_rss_bytes'] / mib:.1f} MiB ({(r['peak_rss_bytes'] - r['rss_before_bytes']) / mib:.1f}) "
          f"| {r['seconds']:.1f} s | {r['seconds'] / c['seconds']:.2f} | {diff:.1e} |")
PY
