#!/usr/bin/env bash
# Two builds of rewind side by side on BDF runs (CVODES on rewind's N_Vectors): the same bits, and
# the time of each. For a change to the N_Vector code (bench/results/nvector.md).
#
#   bench/run_nvector_compare.sh OLD_DIR NEW_DIR
#
# Each directory holds a build's `rewind` (the command-line tool), `cvodes_nvector_bench` and
# `distributed_brusselator_bdf_bench` (copy them out of build/src/cli and build/bench). Checks:
#   - the CLI's BDF runs (`rewind run … --method bdf --json`: Robertson dense, Brusselator band,
#     GMRES, and GMRES on the Thrust backend), and the Brusselator across 1–4 MPI ranks: the
#     reports of both builds must be equal but for their timings;
#   - cvodes_nvector_bench: loss and gradient digests equal case by case;
#   - distributed_brusselator_bdf_bench on 1–4 ranks: loss, dJ/dθ and |dJ/dy0|² equal.
# Then the time: ROUNDS rounds (default 5), each running the old and the new build once in turn
# (so that a busy machine slows both alike), of one CLI Brusselator BDF run (n = 64, GMRES, Eigen
# N_Vector) and of cvodes_nvector_bench; printed as best and median seconds and new/old ratios.
set -euo pipefail
OLD=${1:?old build directory}
NEW=${2:?new build directory}
ROUNDS=${ROUNDS:-5}
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
export OMPI_MCA_mpi_yield_when_idle=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A JSON report without what depends on the clock.
strip_times() {
  python3 -c '
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if not any(w in k for w in ("seconds", "cost_ratio", "elapsed", "rss", "throughput"))}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True, indent=1))'
}

same=0 differ=0
compare() {  # name, then the arguments of `rewind`
  local name=$1
  shift
  "$OLD/rewind" "$@" --json | strip_times > "$work/old.json"
  "$NEW/rewind" "$@" --json | strip_times > "$work/new.json"
  if cmp -s "$work/old.json" "$work/new.json"; then
    echo "same bits: $name"
    same=$((same + 1))
  else
    echo "DIFFERENT: $name"
    diff "$work/old.json" "$work/new.json" | head -20 || true
    differ=$((differ + 1))
  fi
}
compare "robertson bdf dense" run robertson --method bdf --atol 1e-10 --snapshots 4
compare "brusselator bdf band" run brusselator --n 8 --method bdf --steps 6 --rtol 1e-8 --atol 1e-10
compare "brusselator bdf gmres" run brusselator --n 16 --method bdf --steps 4 --rtol 1e-8 \
  --atol 1e-10 --linear-solver gmres --snapshots 2
compare "brusselator bdf gmres, thrust" run brusselator --n 16 --method bdf --steps 4 --rtol 1e-8 \
  --atol 1e-10 --linear-solver gmres --backend thrust
for ranks in 1 2 3 4; do
  "$MPIEXEC" -q -np "$ranks" --oversubscribe "$OLD/rewind" run brusselator --n 12 --method bdf \
    --steps 6 --snapshots 2 --json | strip_times > "$work/old.json"
  "$MPIEXEC" -q -np "$ranks" --oversubscribe "$NEW/rewind" run brusselator --n 12 --method bdf \
    --steps 6 --snapshots 2 --json | strip_times > "$work/new.json"
  if cmp -s "$work/old.json" "$work/new.json"; then
    echo "same bits: brusselator bdf on $ranks ranks"
    same=$((same + 1))
  else
    echo "DIFFERENT: brusselator bdf on $ranks ranks"
    differ=$((differ + 1))
  fi
done
"$OLD/cvodes_nvector_bench" --repeats 1 | sed 's/best.*loss/loss/' > "$work/old.txt"
"$NEW/cvodes_nvector_bench" --repeats 1 | sed 's/best.*loss/loss/' > "$work/new.txt"
if cmp -s "$work/old.txt" "$work/new.txt"; then
  echo "same bits: cvodes_nvector_bench, every case"
  same=$((same + 1))
else
  echo "DIFFERENT: cvodes_nvector_bench"
  diff "$work/old.txt" "$work/new.txt" || true
  differ=$((differ + 1))
fi
for ranks in 1 2 3 4; do
  bits() {
    "$MPIEXEC" -q -np "$ranks" --oversubscribe "$1/distributed_brusselator_bdf_bench" --n 16 \
      --intervals 6 --t 3 | sed 's/"forward_seconds.*"rhs"/"rhs"/'
  }
  if [[ "$(bits "$OLD")" == "$(bits "$NEW")" ]]; then
    echo "same bits: distributed_brusselator_bdf_bench on $ranks ranks"
    same=$((same + 1))
  else
    echo "DIFFERENT: distributed_brusselator_bdf_bench on $ranks ranks"
    differ=$((differ + 1))
  fi
done
echo "bits: $same comparisons the same, $differ different"

# Time, old and new alternating.
cli_run() {
  local start end
  start=$(date +%s.%N)
  "$1/rewind" run brusselator --n 64 --method bdf --linear-solver gmres --steps 8 --rtol 1e-5 \
    --atol 1e-7 --no-fd-check --json > /dev/null
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
: > "$work/cli_old" ; : > "$work/cli_new"
for _ in $(seq "$ROUNDS"); do
  cli_run "$OLD" >> "$work/cli_old"
  cli_run "$NEW" >> "$work/cli_new"
  "$OLD/cvodes_nvector_bench" --repeats 1 | awk '{print $1, $3}' >> "$work/bench_old"
  "$NEW/cvodes_nvector_bench" --repeats 1 | awk '{print $1, $3}' >> "$work/bench_new"
done
python3 - "$work" <<'PY'
import collections, statistics, sys
work = sys.argv[1]
def summary(old, new, name):
    bo, bn = min(old), min(new)
    mo, mn = statistics.median(old), statistics.median(new)
    print(f"{name:32s} old best {bo:.4f} median {mo:.4f}   new best {bn:.4f} median {mn:.4f}"
          f"   new/old best {bn / bo:.3f} median {mn / mo:.3f}")
read = lambda p: [float(l) for l in open(p) if l.strip()]
summary(read(f"{work}/cli_old"), read(f"{work}/cli_new"), "CLI brusselator n=64 bdf gmres")
cases = {}
for which in ("old", "new"):
    for line in open(f"{work}/bench_{which}"):
        name, seconds = line.split()
        cases.setdefault(name, {"old": [], "new": []})[which].append(float(seconds))
for name, t in cases.items():
    summary(t["old"], t["new"], "cvodes_nvector_bench " + name)
PY
[[ $differ -eq 0 ]]
