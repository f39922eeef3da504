#!/usr/bin/env bash
# bench/run_gradient_cost.sh — the cost of a store-all gradient in forward runs, as a table.
#
#   bench/run_gradient_cost.sh                      # build (Release) if needed, run, print
#   BUILD_DIR=/tmp/b bench/run_gradient_cost.sh     # another build folder
#   bench/run_gradient_cost.sh --benchmark_filter=grayscott   # extra arguments go to the program
#
# Runs build-bench/bench/gradient_cost_bench (Google Benchmark) once, in one process, so that
# every ratio compares runs taken side by side on the same machine, then prints one row per case
# (Lorenz-96 N = 40 and 10^5, Gray–Scott 10^4 and 10^6 unknowns; RK4, fixed step, every state
# stored) and the per-piece timings that explain the ratios. The JSON the table is made from is
# kept in $BUILD_DIR/gradient_cost.json. Needs cmake, a C++20 compiler, Eigen 3.4, Google
# Benchmark (Debian: libbenchmark-dev) and python3 (standard library only).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build-bench}"
JOBS="${JOBS:-2}"
JSON="$BUILD_DIR/gradient_cost.json"

if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DREWIND_WITH_CUDA=OFF \
    -DREWIND_BUILD_BENCHMARKS=ON >/dev/null
fi
cmake --build "$BUILD_DIR" --target gradient_cost_bench -j "$JOBS" >/dev/null

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')," \
  "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "build:   $(grep -m1 '^CMAKE_BUILD_TYPE' "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2)," \
  "$("$(grep -m1 '^CMAKE_CXX_COMPILER:' "$BUILD_DIR/CMakeCache.txt" | cut -d= -f2)" --version | head -1)"
echo

"$BUILD_DIR/bench/gradient_cost_bench" --benchmark_out="$JSON" --benchmark_out_format=json \
  --benchmark_counters_tabular=false "$@" >&2

python3 - "$JSON" <<'EOF'
import json, sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
by_name = {r["name"].split("/iterations")[0].split("/min_time")[0]: r for r in runs}
cases = [("lorenz96_N40", "Lorenz-96 N=40"), ("lorenz96_N1e5", "Lorenz-96 N=1e5"),
         ("grayscott_n71", "Gray-Scott n=71"), ("grayscott_n708", "Gray-Scott n=708")]

print("RK4, fixed step, store-all (every state stored; \"stages stored\": every step's stage")
print("values instead, so the reverse sweep re-runs nothing), Eigen backend, 1 thread; medians.")
print("ratio = gradient / forward (StoreAllAdjoint::run vs forward_loss, wall time, run side by")
print("side); cpu = the same with thread CPU time; driver = the driver's own split,")
print("(setup + forward + reverse) / forward, where its forward also copies each state into the")
print("store. \"first call\": a new driver per gradient, so allocating the states is in both.\n")
head = ("case", "unknowns", "steps", "forward ms", "gradient ms", "ratio", "cpu",
        "drv fwd ms", "drv rev ms", "driver", "rhs/vjp per step", "allocs/run")
rows = []
for (kind, suffix), (key, label) in [(k, c) for k in (("Gradient", ""),
                                                     ("GradientFirstCall", ", first call"),
                                                     ("GradientStages", ", stages stored"))
                                     for c in cases]:
    g = by_name.get(kind + "/" + key)
    if g is None or "error_message" in g:
        continue
    rows.append((label + suffix, f"{g['unknowns']:.0f}", f"{g['steps']:.0f}", f"{g['fwd_ms']:.3f}",
                 f"{g['grad_ms']:.3f}", f"{g['ratio']:.2f}", f"{g['ratio_cpu']:.2f}",
                 f"{g['drv_fwd_ms']:.3f}", f"{g['drv_rev_ms']:.3f}", f"{g['drv_ratio']:.2f}",
                 f"{g['rhs_fwd/step']:.0f}+{g['rhs_rev/step']:.0f} / {g['vjp/step']:.0f}",
                 f"{g['allocs/run']:.0f}"))

def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(" --- " for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")

table(head, rows)

f_rows = []
for key, label in cases:
    f = by_name.get("Forward/" + key)
    if f is not None and "error_message" not in f:
        f_rows.append((label, f"{f['fwd_ms']:.3f}", f"{f['allocs/run']:.0f}",
                       f"{f['start_spread']:.3g}", f"{f['start_active']:.2f}"))
if f_rows:
    print("\nForward/<case> alone (no gradient benchmark around it), and the living state every case")
    print("starts from (bench/living_states.hpp): spread = std(v) for Gray-Scott, std(y) for")
    print("Lorenz-96; active = share of cells with v > 0.05, of sites with |y_i - F| > 0.1:\n")
    table(("case", "forward ms", "allocs/run", "start spread", "start active"), f_rows)

def us(name):
    r = by_name.get(name)
    return None if r is None else r["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[r["time_unit"]]

p_rows = []
for key, label in cases:
    rhs, vjp = us("Rhs/" + key), us("Vjp/" + key)
    step, adj = us("Rk4Step/" + key), us("Rk4AdjointStep/" + key)
    if None in (rhs, vjp, step, adj):
        continue
    p_rows.append((label, f"{rhs:.3g}", f"{vjp:.3g}", f"{vjp / rhs:.2f}", f"{step:.4g}",
                   f"{adj:.4g}", f"{1 + adj / step:.2f}"))
if p_rows:
    print("\nPieces (us per call; 1 + adjoint step / step is the ratio the loops alone would give):\n")
    table(("problem", "rhs", "vjp", "vjp/rhs", "RK4 step", "RK4 adjoint step", "1 + adj/step"),
          p_rows)
other = [(n, f"{us(n):.0f}") for n in ("AllFinite/1e6", "LinearCombination/1e6_1term",
                                      "LinearCombination/1e6_4terms") if us(n) is not None]
if other:
    print()
    table(("vector operation at 1e6", "us"), other)
EOF
