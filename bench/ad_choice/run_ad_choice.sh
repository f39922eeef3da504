#!/usr/bin/env bash
# Runs bench/ad_choice/ad_choice_bench and prints the table of bench/results/ad_choice.md: each
# derived vjp's CPU time (median of 3 repetitions of at least 0.5 s) and its ratio to the
# hand-written vjp of the same case.
#
#   bench/ad_choice/run_ad_choice.sh [BUILD_DIR]      # default: build
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target ad_choice_bench -j2 >/dev/null
program=$(realpath "$build/bench/ad_choice_bench")
json=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$json" "$work"' EXIT
# In a scratch folder: ADOL-C writes a tape that outgrows its buffers to files in the working
# directory.
(cd "$work" && "$program" --benchmark_min_time=0.5 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null)
python3 - "$json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
median = {r["run_name"]: r for r in runs if r.get("aggregate_name") == "median"}
cases, libraries = [], []
for name in median:
    library, case = name.split("/", 1)
    if case not in cases: cases.append(case)
    if library not in libraries: libraries.append(library)
def us(r): return r["cpu_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[r["time_unit"]]
def shown(t):
    if t < 1.0: return f"{t * 1e3:.3g} ns"
    if t < 1e3: return f"{t:.3g} µs"
    return f"{t * 1e-3:.3g} ms"
print("| case | n | " + " | ".join(libraries) + " |")
print("| --- | ---: | " + " | ".join("---:" for _ in libraries) + " |")
for case in cases:
    hand = us(median["Hand/" + case])
    cells = []
    for library in libraries:
        r = median.get(library + "/" + case)
        if r is None: cells.append("—"); continue
        t = us(r)
        cells.append(shown(t) if library == "Hand" else f"{shown(t)} ({t / hand:.1f}×)")
    n = int(median["Hand/" + case]["n"])
    print(f"| {case} | {n} | " + " | ".join(cells) + " |")
PY
