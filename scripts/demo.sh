#!/usr/bin/env bash
# The main demonstration: installs what is missing, builds (Release), then
#   1. the plan of every gradient of the fit below: 10 000 RK4 steps in 10 snapshots;
#   2. one long gradient alone: Gray–Scott reaction–diffusion (2 x 71^2 unknowns, a living
#      labyrinth at the default (F, k) = (0.037, 0.06)) over 20 000 RK4 steps in 20 snapshots,
#      with memory against store-all, recomputation against the Griewank–Walther optimum, the
#      drift verdict and the gradient's health;
#   3. an inverse problem: noisy observations of v on a 64 x 64 Gray–Scott grid every 500 of
#      10 000 steps, and (F, k) fitted from a start 15 % and 13 % away — every gradient by the
#      checkpointed adjoint in 10 snapshots (640 KiB, where store-all would need 625 MiB) — with
#      standard errors and pictures (build/demo/gray_scott_fit_fields.png, _history.png);
#   4. the whole user journey on a model written in a user's own file;
#   5. a neural ODE trained on the spiral from C++, with its loss curve and fit as PNGs.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the demonstration runs: the tool and the example of step 4 (the tests, benchmarks and
# other examples are scripts/test.sh's to build).
bash scripts/build.sh "$@" --target rewind_cli pendulum_gradient
rewind=./build/src/cli/rewind
out=build/demo
mkdir -p "$out"

echo
echo "== 1. The plan of each gradient of the fit: 10 000 steps in 10 snapshots of 64 KiB"
$rewind plan --steps 10000 --snapshots 10 --state-bytes 65536

echo
echo "== 2. One gradient: Gray-Scott, 2 x 71^2 unknowns, 20 000 RK4 steps, revolve with 20 snapshots"
$rewind run gray_scott --n 71 --steps 20000 --dt 1.0 --snapshots 20 --no-fd-check

echo
echo "== 3. A fit: Gray-Scott's feed F and kill k from noisy observations of v (about 2 minutes)"
$rewind generate gray_scott --n 64 --steps 10000 --observe-every 500 --observe v --noise 0.01 \
  --seed 1 --out "$out/gray_scott_observations.h5" --force
$rewind fit gray_scott --observations "$out/gray_scott_observations.h5" --fit F,k \
  --start F=0.0425,k=0.052 --bounds F=0.02:0.08,k=0.04:0.08 --stages 5 --snapshots 10 \
  --plot "$out/gray_scott_fit"
echo "pictures: $out/gray_scott_fit_fields.png $out/gray_scott_fit_history.png"

echo
echo "== 4. Your own model: derivative check, gradient, finite-difference confirmation"
./build/examples/pendulum_gradient

echo
echo "== 5. A neural ODE trained from C++: the spiral (exact gradients, Adam), plots if matplotlib is there"
[[ -f data/spiral.csv ]] || $rewind generate spiral --out data/spiral.csv
rm -f build/spiral.json
$rewind train spiral --iterations 1000 --json build/spiral.json
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot_training.py build/spiral.json
fi
