#!/usr/bin/env bash
# Builds bench/stencil_models/stencil_models_bench and prints the table of
# bench/results/stencil_models.md: derived (stencil model) against hand-written (built-in) vjp and
# rhs, and the store-all gradient / forward ratio of each, side by side in one run, one thread.
#
#   bench/stencil_models/run_stencil_models.sh [BUILD_DIR] [SECONDS_PER_MEASUREMENT]
#   (defaults: build, 0.2)
set -euo pipefail
build=${1:-build}
seconds=${2:-0.2}
cmake --build "$build" --target stencil_models_bench -j2 >/dev/null
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/stencil_models_bench" "$seconds"
