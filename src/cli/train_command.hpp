// src/cli/train_command.hpp — the `rewind train` subcommand: fit a neural ODE to a time series.
//
//   rewind generate spiral                                    # data/spiral.csv, once
//   rewind train spiral                                       # 2000 Adam iterations, log to stdout
//   rewind train spiral --iterations 500 --json spiral.json --save-parameters spiral.h5
//   rewind train spiral --snapshots 4 --window 40             # revolve(4) inside each window
//   python3 scripts/plot_training.py spiral.json              # loss curve and trajectories, PNG
//
// spiral: the classic neural-ODE benchmark. Data: the series in --data (default
// data/spiral.csv; `rewind generate spiral` writes it). Model dy/dt = mlp(y³; θ) with an MLP
// 2-H-2 (--hidden H, default 50; --activation, default tanh; --features cube|identity), weights
// Glorot-uniform from --init-seed. Each iteration draws --batch windows of --window data
// intervals (seeded by --seed), integrates them together with --method (default rk4) at
// --substeps steps per interval, takes the exact discrete gradient of the window MSE
// (rwd::training::NeuralOdeTrainer, store-all or revolve(--snapshots)) and updates θ with
// --optimizer adam|sgd at --learning-rate, decayed geometrically to --final-learning-rate
// (default 1e-4) by the last iteration. --adjoint backsolve [--reanchor] uses the continuous
// backsolve adjoint instead of the exact discrete one (for comparison). Every --eval-every
// iterations the whole trajectory is predicted from the first point and its MSE against the data is
// recorded.
//
// On a terminal a progress bar shows the iteration and the current loss. At the end: one
// summary line (iterations, final minibatch loss, trajectory MSE, time per iteration).
// --json FILE writes the log: {"problem", "model", "options", "iterations": [{"iteration",
// "loss", "gradient_norm", "seconds"}], "evaluations": [{"iteration", "trajectory_mse"}],
// "data": {"t", "y"}, "predictions": [{"iteration", "y"}] (initial and final parameters),
// "final_loss", "final_trajectory_mse", "seconds_per_iteration", "parameters_file"}.
// --target-mse X makes the exit status 1 when the final trajectory MSE is above X.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_train_command(CLI::App& app);

}  // namespace rwd::cli
