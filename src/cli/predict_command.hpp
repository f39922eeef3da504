// src/cli/predict_command.hpp — `rewind predict`: integrate a trained neural ODE from a state.
//
//   rewind predict --parameters lorenz.h5 --y0 1,1,1 --t-final 2 --steps 200 --output p.csv
//   rewind predict --parameters hare_lynx.h5 --y0 30,4 --t 1900,1901,1903.5 --output p.h5
//   rewind predict --parameters spiral.h5 --y0 2,0 --t-final 25 --steps 999      # CSV to stdout
//
// The model file (written by `rewind train --save-parameters` or a --checkpoint) records the
// network, input features, augmentation, time input, normalisation, method and substeps, so
// nothing else is needed: --y0 gives the D observed components in the data's units (augmented
// ones start at zero, as in training), the times are --t (a list, strictly increasing) or a
// uniform grid of --steps intervals from --t0 (default 0) to --t-final, and --substeps
// (default: the model's) RK steps are taken per interval. The output is a time series (t and the
// D components, named as in the training data) in data units: CSV, or HDF5 by the extension
// (rwd::training::save_time_series_*), or CSV on stdout without --output.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_predict_command(CLI::App& app);

}  // namespace rwd::cli
