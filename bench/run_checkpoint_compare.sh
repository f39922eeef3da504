#!/usr/bin/env bash
# bench/run_checkpoint_compare.sh — store-all against revolve on one long gradient: peak memory,
# time, and the cost model's prediction, as a table.
#
#   bench/run_checkpoint_compare.sh                  # build (Release) if needed, run, print
#   BUILD_DIR=/tmp/b bench/run_checkpoint_compare.sh # another build folder
#   STEPS=20000 bench/run_checkpoint_compare.sh      # a shorter horizon (quick look)
#
# Gray–Scott, n = 71 (10082 unknowns), RK4, dt = 1, L = 10^5 steps, J = ½|y_L|². Each variant runs
# in its own process (build-bench/bench/checkpoint_memory_time), one after the other, so that its
# peak RSS (getrusage ru_maxrss) is its own:
#   store-all              rwd::StoreAllAdjoint, every state kept (8.1 GB at L = 10^5)
#   revolve c = 10, 20, 50 rwd::CheckpointedAdjoint + revolve_schedule(c), default options
#   revolve c = 20, no drift   the same with max_fingerprints = 1 (the drift monitor fingerprints
#                          only y_0): what the monitor's fingerprints cost (DRIFT_OFF=0 skips it)
# then the revolve action-generation benchmark (revolve_action_bench; ACTION_BENCH=0 skips it).
# About 8 minutes on 2 cores. The JSON lines the table is made from are kept in
# $BUILD_DIR/checkpoint_compare.jsonl. Needs cmake, a C++20 compiler, Eigen 3.4, Google Benchmark
# (Debian: libbenchmark-dev) and python3 (standard library only).
#
# Environment: STEPS (100000), STORE_ALL_STEPS (= STEPS; lowered to 50000, and said so, when
# the states would not fit in 60% of MemAvailable), GRID (71), SNAPSHOTS ("10 20 50"),
# DRIFT_OFF (1), ACTION_BENCH (1), BUILD_DIR, JOBS (2).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build-bench}"
JOBS="${JOBS:-2}"
STEPS="${STEPS:-100000}"
GRID="${GRID:-71}"
SNAPSHOTS="${SNAPSHOTS:-10 20 50}"
DRIFT_OFF="${DRIFT_OFF:-1}"
ACTION_BENCH="${ACTION_BENCH:-1}"
JSONL="$BUILD_DIR/checkpoint_compare.jsonl"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DREWIND_WITH_CUDA=OFF \
    -DREWIND_BUILD_BENCHMARKS=ON >/dev/null
fi
targets=(checkpoint_memory_time)
[[ "$ACTION_BENCH" == 1 ]] && targets+=(revolve_action_bench)
cmake --build "$BUILD_DIR" --target "${targets[@]}" -j "$JOBS" >/dev/null
PROGRAM="$BUILD_DIR/bench/checkpoint_memory_time"

# Store-all keeps L states of 8·2n² bytes (plus a 32-byte carry, rounded up here): fall back to
# 5·10^4 steps if that does not fit comfortably.
STORE_ALL_STEPS="${STORE_ALL_STEPS:-$STEPS}"
state_bytes=$((16 * GRID * GRID + 64))
avail_bytes=$(awk '/MemAvailable/ {printf "%.0f", $2 * 1024}' /proc/meminfo)
if (( STORE_ALL_STEPS * state_bytes > avail_bytes * 6 / 10 )); then
  echo "note: store-all at $STORE_ALL_STEPS steps needs $((STORE_ALL_STEPS * state_bytes >> 20)) MiB," \
    "more than 60% of MemAvailable ($((avail_bytes >> 20)) MiB): store-all runs 50000 steps" >&2
  STORE_ALL_STEPS=50000
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "build:   $(grep -m1 '^CMAKE_BUILD_TYPE' "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2)," \
  "$("$(grep -m1 '^CMAKE_CXX_COMPILER:' "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2)" --version | head -1)"
echo

: >"$JSONL"
run() {  # label, arguments...
  local label="$1"
  shift
  echo "== $label ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  local line
  line="$("$PROGRAM" --n "$GRID" "$@")"
  echo "{\"label\":\"$label\",\"load\":$(cut -d' ' -f1 /proc/loadavg),${line#\{}" >>"$JSONL"
}

run "store-all" --variant store-all --steps "$STORE_ALL_STEPS"
for c in $SNAPSHOTS; do
  run "revolve c=$c" --variant revolve --snapshots "$c" --steps "$STEPS"
done
if [[ "$DRIFT_OFF" == 1 ]]; then
  run "revolve c=20, no drift" --variant revolve --snapshots 20 --steps "$STEPS" --max-fingerprints 1
fi
echo "load after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

python3 - "$JSONL" <<'EOF'
import json, sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
base = next((r for r in runs if r["variant"] == "store-all"), None)

def mib(b):
    return f"{b / 2**20:,.1f}"

def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(" --- " for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")

print(f"Gray-Scott n={runs[0]['grid']} ({runs[0]['unknowns']} unknowns), RK4, dt={runs[0]['dt']:g};"
      " one process per variant. ratio = gradient wall / forward-only wall (rwd::forward_loss, same L);")
print("predicted = cost-model time (simulator counts x calibrated per-operation times) / forward-only;")
print("self-cal. err = measured / predicted - 1 with step and adjoint times from the run's own first")
print("and reverse sweeps (checks the recomputation counts only);")
print("vs store-all: RSS ratio, and time per step ratio (the same as the time ratio when L is equal).\n")
head = ("variant", "steps", "peak RSS MiB", "stored MiB", "wall s", "ratio vs fwd", "predicted",
        "\\|meas/pred-1\\|", "self-cal. err", "recomputed steps", "grad_theta hash", "RSS vs store-all",
        "time vs store-all")
rows = []
for r in runs:
    rss_vs = time_vs = "-"
    if base is not None:
        rss_vs = f"{r['peak_rss_bytes'] / base['peak_rss_bytes']:.4f}"
        time_vs = f"{(r['wall_seconds'] / r['steps']) / (base['wall_seconds'] / base['steps']):.2f}"
    rows.append((r["label"], f"{r['steps']}", mib(r["peak_rss_bytes"]), mib(r["peak_stored_bytes"]),
                 f"{r['wall_seconds']:.1f}", f"{r['measured_ratio']:.2f}", f"{r['predicted_ratio']:.2f}",
                 f"{abs(r['prediction_error']) * 100:.1f}%",
                 f"{r['prediction_error_self'] * 100:+.1f}%", f"{r['replayed_steps']}",
                 r["grad_theta_hash"], rss_vs, time_vs))
table(head, rows)

hashes = {}
for r in runs:
    hashes.setdefault(r["steps"], set()).add((r["grad_theta_hash"], r["grad_y0_hash"]))
print()
for steps, hs in sorted(hashes.items()):
    names = [r["label"] for r in runs if r["steps"] == steps]
    verdict = "bit-for-bit identical" if len(hs) == 1 else "DIFFER"
    print(f"gradients at L={steps} ({', '.join(names)}): {verdict}")
drift = [r for r in runs if "drift_bitwise_identical" in r]
if drift:
    ok = all(r["drift_bitwise_identical"] for r in drift)
    print("drift monitor: every checked replay " + ("bitwise identical" if ok else "NOT identical") +
          f" ({', '.join(str(r['drift_checked']) for r in drift)} states checked)")

print("\nThe driver's split (untimed = wall - its three timers: snapshot copies; store-all: allocating"
      " its states;\ntimed err = (fwd + recompute + reverse) / the model's step and adjoint terms - 1)"
      " and the calibration\n(us per operation, medians of the short calibration gradients):\n")
head = ("variant", "fwd s", "recompute s", "reverse s", "untimed s", "timed err", "advances",
        "stores", "restores",
        "fwd-only s", "fwd-only step us", "advance us", "adjoint factor", "reverse us",
        "store/restore us", "drift stride", "counts-only predicted", "cpu ratio")
rows = []
for r in runs:
    c = r["calibration"]
    rows.append((r["label"], f"{r['forward_seconds']:.2f}", f"{r['recompute_seconds']:.2f}",
                 f"{r['reverse_seconds']:.2f}", f"{r['untimed_seconds']:.2f}",
                 f"{r['prediction_error_timed'] * 100:+.1f}%", f"{r['advances']}", f"{r['stores']}",
                 f"{r['restores']}", f"{r['forward_only_seconds']:.2f}",
                 f"{c['forward_only_step_time'] * 1e6:.1f}", f"{c['step_time'] * 1e6:.1f}",
                 f"{c['adjoint_cost_factor']:.3f}",
                 f"{c['step_time'] * (1 + c['adjoint_cost_factor']) * 1e6:.1f}",
                 f"{c['write_time'] * 1e6:.2f}", f"{c['measured_drift_stride'] or '-'}",
                 f"{r['predicted_ratio_counts_only']:.2f}", f"{r['measured_ratio_cpu']:.2f}"))
table(head, rows)
EOF

if [[ "$ACTION_BENCH" == 1 ]]; then
  echo
  echo "Revolve action generation, l = 10^7 (revolve_action_bench; ns per action, 3 whole streams):"
  echo
  "$BUILD_DIR/bench/revolve_action_bench" --benchmark_out="$BUILD_DIR/revolve_action.json" \
    --benchmark_out_format=json >/dev/null 2>&1
  python3 - "$BUILD_DIR/revolve_action.json" <<'EOF'
import json, sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
print("| benchmark | c | r | actions/step | advances/step | optimal | ns/action |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in runs:
    name, c = r["name"].split("/")[0], r["name"].split("/")[1].split(":")[1]
    print(f"| {name} | {c} | {r['r']:.0f} | {r['actions/step']:.3f} | {r['advances/step']:.3f} | "
          f"{'yes' if r['optimal'] == 1 else 'NO'} | {r['ns/action']:.2f} |")
EOF
fi
