// src/cli/generate_command.cpp — see generate_command.hpp.
#include "generate_command.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "rewind/error.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/time_series.hpp"

namespace rwd::cli {
namespace {

struct SpiralSettings {
  std::string out = "data/spiral.csv";
  Index points = 1000;
  double t_final = 25.0;
  Index substeps = 100;
  bool force = false;
};

training::TimeSeries spiral_series(const SpiralSettings& settings) {
  const CubicSpiral spiral;
  return training::sample_solution(spiral, spiral.default_initial_state(), spiral.default_parameters(),
                                   ButcherTableau::rk4(), settings.t_final, settings.points, settings.substeps, {"y0", "y1"});
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app) {
  CLI::App* generate = app.add_subcommand("generate", "Write a reference dataset (see 'generate spiral --help').");
  generate->require_subcommand(1);
  auto settings = std::make_shared<SpiralSettings>();
  CLI::App* spiral = generate->add_subcommand(
      "spiral", "The cubic spiral dy/dt = (y^3)A, A = [[-0.1, 2], [-2, -0.1]], y(0) = (2, 0), sampled uniformly.");
  spiral->add_option("--out,-o", settings->out, "output file: .csv, or .h5/.hdf5")->capture_default_str();
  spiral->add_option("--points", settings->points, "samples, including t = 0")->capture_default_str();
  spiral->add_option("--t-final", settings->t_final, "last sample time")->capture_default_str();
  spiral->add_option("--substeps", settings->substeps, "RK4 steps per sample interval")->capture_default_str();
  spiral->add_flag("--force", settings->force, "overwrite an existing file");
  spiral->callback([settings] {
    const std::filesystem::path out(settings->out);
    if (std::filesystem::exists(out) && !settings->force)
      rwd::detail::fail<InvalidArgument>("'", settings->out, "' exists; pass --force to overwrite it");
    const training::TimeSeries series = spiral_series(*settings);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    if (settings->force) std::filesystem::remove(out);
    const std::string ext = out.extension().string();
    if (ext == ".h5" || ext == ".hdf5")
      training::save_time_series_hdf5(out, series);
    else if (ext == ".csv")
      training::save_time_series_csv(out, series);
    else
      rwd::detail::fail<InvalidArgument>("'", settings->out, "': the output must end in .csv, .h5 or .hdf5");
    std::cout << "wrote " << series.points() << " points of the cubic spiral on [0, " << settings->t_final
              << "] to " << settings->out << "\n";
  });
  return generate;
}

}  // namespace rwd::cli
