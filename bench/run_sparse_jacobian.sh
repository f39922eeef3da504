#!/usr/bin/env bash
# Builds bench/sparse_jacobian_bdf and prints the lines of bench/results/sparse_jacobian.md: the
# 2-D Brusselator's BDF gradient (store-all over 4 intervals of [0, 2], default tolerances, one
# thread) with the band solver on the built-in problem (difference quotients, LAPACK), and with
# the sparse solver (KLU, the stencil model's Jacobian values) and GMRES on the stencil model.
#
#   bench/run_sparse_jacobian.sh [BUILD_DIR] [SIZES…]     (defaults: build, 32 64)
set -euo pipefail
build=${1:-build}
shift || true
sizes=("$@")
if ((${#sizes[@]} == 0)); then sizes=(32 64); fi
cmake --build "$build" --target sparse_jacobian_bdf -j2 >/dev/null
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${sizes[@]}"; do
  repeat=3
  if ((n > 64)); then repeat=1; fi
  for c in band-builtin sparse-stencil gmres-stencil; do
    "$build/bench/sparse_jacobian_bdf" --case "$c" --n "$n" --repeat "$repeat"
  done
done
