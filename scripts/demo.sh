#!/usr/bin/env bash
# The main demonstration: installs what is missing, builds (Release), then
#   1. a long gradient that store-all could not hold — Gray–Scott reaction–diffusion with
#      10 082 unknowns over 100 000 RK4 steps, a labyrinth pattern that stays alive the whole
#      way (store-all would need 8 GB) — with the revolve
#      schedule in 20 snapshots (1.6 MB), printing memory against store-all, recomputation
#      against the Griewank–Walther optimum, and the drift verdict;
#   2. the whole user journey on a model written in a user's own file;
#   3. a neural ODE trained on the spiral from C++, with its loss curve and fit as PNGs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
rewind=./build/src/cli/rewind

echo
echo "== 1. The plan: 100 000 steps in 20 snapshots"
$rewind plan --steps 100000 --snapshots 20

echo
echo "== 2. The run: Gray-Scott, 2 x 71^2 unknowns, 100 000 RK4 steps, revolve with 20 snapshots"
$rewind run gray_scott --n 71 --steps 100000 --dt 1.0 --snapshots 20 --no-fd-check

echo
echo "== 3. Your own model: derivative check, gradient, finite-difference confirmation"
./build/examples/pendulum_gradient

echo
echo "== 4. A neural ODE trained from C++: the spiral (exact gradients, Adam), plots if matplotlib is there"
[[ -f data/spiral.csv ]] || $rewind generate spiral --out data/spiral.csv
rm -f build/spiral.json
$rewind train spiral --iterations 1000 --json build/spiral.json
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot_training.py build/spiral.json
fi
