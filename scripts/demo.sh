#!/usr/bin/env bash
# The main demonstration: installs what is missing, builds (Release), then computes exact
# gradients of explicit Runge–Kutta simulations — a model written in a user's own file
# (examples/pendulum_gradient.cpp) and the built-in problems through the rewind tool.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"

echo
echo "== 1. Your own model: derivative check, gradient, finite-difference confirmation"
./build/examples/pendulum_gradient

echo
echo "== 2. Lorenz-96 (N = 40), RK4, 200 steps: J, gradient norms, FD spot check, summary"
./build/src/cli/rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01

echo
echo "== 3. Gray-Scott reaction-diffusion, 2 x 100^2 unknowns, 500 RK4 steps, every state stored"
./build/src/cli/rewind run gray_scott --n 100 --steps 500 --method rk4 --dt 1.0
