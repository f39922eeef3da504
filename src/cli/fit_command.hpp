// src/cli/fit_command.hpp — the `rewind fit` subcommand: a built-in problem's parameters
// estimated from an observation file, every gradient by the checkpointed adjoint (fit_run.hpp).
//
//   rewind fit lotka_volterra --observations lv.h5 --fit alpha,gamma --start alpha=1.3,gamma=3.3
//   rewind fit gray_scott --observations gs.h5 --fit F,k --start F=0.045,k=0.055 --snapshots 20
//              --json --plot gs_fit       (one command line)
//
// Text mode prints one line per iteration and a table of start, fit and the file's values; --json
// prints one object (fitted parameters by name, J, iterations, evaluations, peak memory, the
// schedule, the history). A fit whose gradient turns non-finite reports the best parameters so
// far and exits 1.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_fit_command(CLI::App& app);

}  // namespace rwd::cli
