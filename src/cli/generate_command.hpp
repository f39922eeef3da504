// src/cli/generate_command.hpp — the `rewind generate` subcommand: reference datasets for training.
//
//   rewind generate spiral                          # data/spiral.csv: 1000 points on [0, 25]
//   rewind generate spiral --out spiral.h5 --points 2000 --t-final 50
//
// spiral: the true cubic-spiral dynamics dy/dt = (y³)A, A = [[−0.1, 2], [−2, −0.1]], y(0) = (2, 0)
// (rwd::CubicSpiral), integrated with RK4 at --substeps steps per output interval (default 100,
// so the data are accurate to ~1e-10 — far below anything a fit resolves) and written as a time
// series: CSV "t,y0,y1" with 17 significant digits, or HDF5 datasets t [points] and
// y [points × 2] when the name ends in .h5/.hdf5. Refuses to overwrite an existing file
// unless --force.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_generate_command(CLI::App& app);

}  // namespace rwd::cli
