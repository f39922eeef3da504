#!/usr/bin/env bash
# Two builds of bench/neural_ode_bench side by side: training iterations of the spiral (2-50-2,
# batch 20 x window 10) and of Lorenz-63 (3-64-64-3, batch 32 x window 20), the two binaries
# alternating ROUNDS times, one thread each; per round the time per iteration of each (CPU time
# from perf stat's task-clock when perf is there, else wall time) and their ratio, then the
# median ratio. On a shared machine the ratio of neighbouring runs is the figure to read.
#
#   bench/neural_ode_before_after.sh OLD/neural_ode_bench NEW/neural_ode_bench [ROUNDS] [LORENZ_CSV]
#
# LORENZ_CSV: normalised Lorenz-63 samples as bench/run_neural_ode_compare.sh writes them
# (build/lorenz63.csv); without it only the spiral runs.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=$1 NEW=$2 ROUNDS=${3:-5} LORENZ=${4:-build/lorenz63.csv}
[[ -f data/spiral.csv ]] || { echo "data/spiral.csv missing (rewind generate spiral)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# ms per iteration of one run: $1 binary, $2 iterations, rest: arguments.
per_iteration() {
  local bin=$1 iterations=$2
  shift 2
  if command -v perf >/dev/null; then
    perf stat -x, -e task-clock -o "$OUT/stat" "$bin" --mode train --method rk38 \
        --iterations "$iterations" "$@" >"$OUT/json"
    python3 -c "import sys; print(float(sys.argv[1]) / int(sys.argv[2]))" \
        "$(grep task-clock "$OUT/stat" | cut -d, -f1)" "$iterations"
  else
    "$bin" --mode train --method rk38 --iterations "$iterations" "$@" >"$OUT/json"
    python3 -c "import json; print(json.load(open('$OUT/json'))['seconds_per_iteration'] * 1e3)"
  fi
}

compare() {
  local name=$1 iterations=$2
  shift 2
  echo "$name: ms per iteration (old, new, old/new)"
  local ratios=()
  for round in $(seq "$ROUNDS"); do
    local old new
    old=$(per_iteration "$OLD" "$iterations" "$@")
    new=$(per_iteration "$NEW" "$iterations" "$@")
    ratios+=("$(python3 -c "print($old / $new)")")
    printf '  round %d  %8.3f  %8.3f  %5.2fx\n' "$round" "$old" "$new" "${ratios[-1]}"
  done
  python3 -c "import statistics, sys; print('  median ratio %.2fx' % statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}"
}

compare "spiral 2-50-2, batch 20 x window 10" 2000
if [[ -f $LORENZ ]]; then
  compare "Lorenz-63 3-64-64-3, batch 32 x window 20" 60 --data "$LORENZ" --layers 64,64 \
      --features identity --batch 32 --window 20
fi
