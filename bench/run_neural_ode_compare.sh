#!/usr/bin/env bash
# rewind against PyTorch and torchdiffeq on neural ODEs (bench/neural_ode_torch_compare.py): the
# spiral (2-50-2) and Lorenz-63 from noisy samples (3-64-64-3): gradient agreement, time per
# training iteration and peak RSS; for the spiral also memory over horizons 10^3..10^5.
# Installs Debian's python3-torch if missing, and torchdiffeq (pure Python, from PyPI) into a
# virtual environment on top of the system packages in $BUILD_DIR/torch-venv. ~10 minutes.
#
#   bench/run_neural_ode_compare.sh
#   BUILD_DIR=$PWD/build-bench bench/run_neural_ode_compare.sh --horizons 1000,10000
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-$PWD/build}
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-torch python3-venv
fi
VENV=$BUILD_DIR/torch-venv
if [[ ! -x $VENV/bin/python ]]; then
  mkdir -p "$BUILD_DIR"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
"$VENV/bin/python" -c "import torchdiffeq" 2>/dev/null || "$VENV/bin/pip" install -q torchdiffeq
if [[ ! -x $BUILD_DIR/bench/neural_ode_bench || ! -x $BUILD_DIR/src/cli/rewind ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DREWIND_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target neural_ode_bench rewind_cli
fi
[[ -f data/spiral.csv ]] || "$BUILD_DIR/src/cli/rewind" generate spiral --out data/spiral.csv
# Lorenz-63 (σ 10, ρ 28, β 8/3) from its default initial state, RK4 with dt 0.01, every second step
# observed (1000 samples 0.02 apart), Gaussian noise σ = 0.5, then z-scored per component.
LORENZ=$BUILD_DIR/lorenz63.csv
if [[ ! -f $LORENZ ]]; then
  "$BUILD_DIR/src/cli/rewind" generate lorenz63 --steps 2000 --dt 0.01 --method rk4 --observe-every 2 \
      --noise 0.5 --seed 1 --out "$BUILD_DIR/lorenz63.h5" --force >/dev/null
  "$BUILD_DIR/bench/neural_ode_bench" --mode series --observations "$BUILD_DIR/lorenz63.h5" --out "$LORENZ" >/dev/null
fi
"$VENV/bin/python" bench/neural_ode_torch_compare.py --rewind "$BUILD_DIR/bench/neural_ode_bench" \
    --lorenz-data "$LORENZ" --json "$BUILD_DIR/neural_ode_compare.json" "$@"
