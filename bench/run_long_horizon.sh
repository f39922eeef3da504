#!/usr/bin/env bash
# Peak resident memory of the long-horizon example as the horizon grows ×10 and ×100: Heat2D
# 1024 × 1024 (8 MiB per state), explicit Euler, two-level schedule with 4 snapshots in RAM and
# 64 in an HDF5 file. Each horizon runs in its own process under GNU time, so its peak RSS is
# its own. Prints one table row per horizon; the JSON and logs stay in $RESULTS_DIR.
#
#   bench/run_long_horizon.sh                      # 1000 10000 100000 steps (~35 min on 2 cores)
#   STEPS="1000 10000" DISK=/scratch bench/run_long_horizon.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-$PWD/build}
RESULTS_DIR=${RESULTS_DIR:-$BUILD_DIR/long_horizon}
STEPS=${STEPS:-"1000 10000 100000"}
DISK=${DISK:-${TMPDIR:-/tmp}}
if [[ ! -x $BUILD_DIR/examples/long_horizon_offload ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target long_horizon_offload
fi
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (Debian package 'time')" >&2; exit 2; }
mkdir -p "$RESULTS_DIR"
for steps in $STEPS; do
  echo "== $steps steps" >&2
  /usr/bin/time -v "$BUILD_DIR/examples/long_horizon_offload" --steps "$steps" --disk "$DISK" \
      --json "$RESULTS_DIR/long_horizon_$steps.json" > "$RESULTS_DIR/long_horizon_$steps.log" 2>&1
done
python3 - "$RESULTS_DIR" $STEPS <<'PY'
import json, re, sys
root, horizons = sys.argv[1], sys.argv[2:]
mib = 1 << 20
print("| steps | wall | forward runs | peak RSS (GNU time) | RSS before the gradient | "
      "disk writes / reads | disk time hidden | store-all would need |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for steps in horizons:
    d = json.load(open(f"{root}/long_horizon_{steps}.json"))
    log = open(f"{root}/long_horizon_{steps}.log").read()
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1))
    io = d["disk_write_seconds"] + d["disk_read_seconds"]
    hidden = 100.0 * d["disk_hidden_seconds"] / io if io > 0 else 100.0
    print(f"| {d['steps']} | {d['seconds']:.0f} s | {d['forward_steps'] / d['steps']:.2f} | "
          f"{rss_kib / 1024:.1f} MiB | {d['setup_rss_bytes'] / mib:.1f} MiB | "
          f"{d['disk_stores']} / {d['disk_restores']} | {hidden:.1f}% | "
          f"{d['store_all_bytes'] / (1 << 30):.1f} GiB |")
PY
