// src/cli/train_data_command.hpp — `rewind train --data FILE`: fit a neural ODE to any time series.
//
//   rewind train --data lorenz.csv --layers 64,64 --iterations 3000 --save-parameters lorenz.h5
//   rewind train --data runs.h5 --augment 2 --time-dependent --validation 0.2 --patience 10
//   rewind train --data lorenz.csv --lr-schedule cosine --clip-norm 1 --json log.json
//   rewind train --data lorenz.csv --checkpoint-every 500 --checkpoint run.ckpt.h5
//   rewind train --data lorenz.csv --resume run.ckpt.h5           # continues, bit for bit
//   python3 scripts/plot_training.py log.json                        # components, phase, losses
//
// Data: --data FILE.csv|.h5, one trajectory or several (rwd::training::load_trajectories: a
// `trajectory` column in CSV, one group per trajectory in HDF5), any (also irregular) time grid;
// the state dimension D comes from the file. Model: dy/dt = mlp([φ(y); τ(t)]) with hidden layers
// --layers (widths, e.g. 64,64; "none" for a linear field), --activation, --features
// identity|cube, --augment K zero-started extra components (the loss sees the D observed ones),
// --time-dependent (the network also sees t, scaled to the training times). The model works in
// normalised units, z = (y − mean)/std per component from the training points (--no-normalize:
// z = y). Windows of --window observation intervals, --substeps RK steps per interval (--method),
// --batch windows per minibatch, exact discrete gradients (store-all, or revolve with
// --snapshots).
//
// Training: --validation F holds out the last fraction F of every trajectory's points (a
// forecast), --validation-data FILE whole trajectories; every --eval-every iterations the
// trajectories are predicted from their first points and the train and validation errors (MSE
// in normalised units) recorded; --patience N stops after N evaluations without a better
// validation error, and the parameters of the best one are kept. --lr-schedule
// constant|geometric|cosine from --learning-rate to --final-learning-rate over --iterations;
// --clip-norm C rescales longer gradients to C. --checkpoint-every N --checkpoint FILE saves
// parameters, optimizer state, sampler position and history; --resume FILE continues a run with
// the same options bit for bit (the options are compared with those recorded); --stop-at I ends
// this invocation after iteration I as an interruption would (the schedule still spans
// --iterations). --save-parameters FILE writes the model (rewind predict reads it).
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

// Adds --data and the options above to `train`; they run when no subcommand is given.
void add_train_data_options(CLI::App& train);

}  // namespace rwd::cli
