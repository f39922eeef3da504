#!/usr/bin/env bash
# Runs bench/ad_choice/whole_gradient_bench and prints the table of bench/results/ad_choice.md
# (The whole gradient): per case and vjp, the forward run's and the store-all gradient's CPU time
# (median of the repetitions), gradient / forward, and the gradient's time over the hand-written
# vjp's gradient of the same case.
#
#   bench/ad_choice/run_whole_gradient.sh [BUILD_DIR] [REPETITIONS]   # default: build 15
set -euo pipefail
build=${1:-build}
repetitions=${2:-15}
cmake --build "$build" --target whole_gradient_bench -j2 >/dev/null
json=$(mktemp)
trap 'rm -f "$json"' EXIT
# Interleaved repetitions: each round runs every benchmark once, so a change of the machine's load
# falls on all of them alike (this guest is shared).
"$build/bench/whole_gradient_bench" --benchmark_min_time=0.2 \
  --benchmark_repetitions="$repetitions" --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null 2>&1
python3 - "$json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
median = {r["run_name"]: r for r in runs if r.get("aggregate_name") == "median"}
def us(r): return r["cpu_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[r["time_unit"]]
# Rows in the order the program registers them (the run itself interleaves them at random).
cases = {"Lorenz63": 0, "LotkaVolterra": 1}
vjps = {"Hand": 0, "Derived": 1, "OwnVjp": 2}
rows = sorted({(n.split("/")[2], n.split("/")[1]) for n in median if n.startswith("Gradient/")},
              key=lambda row: (cases.get(row[0], 9), row[0], vjps.get(row[1], 9), row[1]))
print("| case | vjp | forward | store-all gradient | gradient / forward | gradient / hand-written gradient |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for case, vjp in rows:
    forward = us(median[f"Forward/{vjp}/{case}"])
    gradient = us(median[f"Gradient/{vjp}/{case}"])
    hand = us(median[f"Gradient/Hand/{case}"])
    print(f"| {case} | {vjp} | {forward:.0f} µs | {gradient:.0f} µs | {gradient / forward:.2f} | "
          f"{gradient / hand:.2f} |")
PY
