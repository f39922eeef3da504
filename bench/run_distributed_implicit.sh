#!/usr/bin/env bash
# esdirk43 with matrix-free GMRES on the built-in Brusselator across MPI ranks, side by side with
# one process (the Eigen engine, --linear-solver gmres): the gradient's total seconds (the tool's
# own, stats.total_seconds, median of REPEAT runs), J and dJ/dθ, and each rank count's time as a
# ratio to one process's. One thread per rank. Results: bench/results/distributed_implicit.md.
#
#   bench/run_distributed_implicit.sh [path/to/rewind]     # N=64 T=1 RANKS="1 2" REPEAT=3
set -euo pipefail
cli=${1:-build/src/cli/rewind}
n=${N:-64}
t_final=${T:-1}
ranks=${RANKS:-"1 2"}
repeat=${REPEAT:-3}
args=(run brusselator --n "$n" --method esdirk43 --adaptive --t-final "$t_final"
      --linear-solver gmres --snapshots 8 --no-fd-check --threads 1 --json)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMP_WAIT_POLICY=passive OMPI_MCA_mpi_yield_when_idle=1

# One line: seconds (median), steps, J, dJ/dθ of `label`'s runs (the command after it).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
measure() {
  local label=$1
  shift
  rm -f "$scratch"/*.json
  for i in $(seq "$repeat"); do "$@" "${args[@]}" >"$scratch/$i.json"; done
  python3 - "$label" "$scratch" <<'PY'
import glob, json, statistics, sys
label, folder = sys.argv[1], sys.argv[2]
runs = [json.load(open(f)) for f in sorted(glob.glob(folder + "/*.json"))]
seconds = statistics.median(r["stats"]["total_seconds"] for r in runs)
r = runs[0]
print("\t".join([label, "%.3f" % seconds, str(r["steps"]), repr(r["loss"]), str(r["grad_theta"])]))
PY
}

echo "brusselator n = $n (2·$n² unknowns), esdirk43 adaptive to t = $t_final, GMRES, revolve(8)"
echo -e "run\tseconds\tsteps\tJ\tdJ/dtheta"
one=$(measure "one process" "$cli" | tee /dev/stderr)
base=$(cut -f2 <<<"$one")
for r in $ranks; do
  line=$(measure "$r rank(s)" mpiexec -q -np "$r" --oversubscribe "$cli" | tee /dev/stderr)
  python3 -c "import sys; print(f'  {sys.argv[1]} rank(s) / one process: {float(sys.argv[2]) / float(sys.argv[3]):.2f}')" \
    "$r" "$(cut -f2 <<<"$line")" "$base"
done
