// bench/cvodes_adjoint_compare.cpp — rewind's checkpointed BDF adjoint against CVODES's own
// adjoint on the same problem, tolerances and horizon. One variant per call (its peak RSS is its
// own); bench/run_cvodes_compare.sh runs both over growing horizons and prints the table.
//
//   cvodes_adjoint_compare --variant cvodes --horizon 10 [--n 64]
//   cvodes_adjoint_compare --variant rewind --horizon 10 --interval 0.5 --snapshots 4
//   cvodes_adjoint_compare --variant cvodes --horizon 10 --vectors serial --band sundials
//       # Debian's SUNDIALS as packaged: its serial vector and its band LU
//
// Problem: the 2D Brusselator (rwd::Brusselator2D, 2n² unknowns, band BDF), J = ½|y_T|²,
// gradient with respect to θ = (A, B, α) and y0. Both variants use rwd::CvodesIntervalStepper with
// the same options:
//   cvodes   one interval [0, T], store-all: exactly CVODES's own adjoint — CVodeAdjInit with a
//            checkpoint every --nd steps over the whole horizon, all in RAM, then CVodeB;
//   rewind   intervals of length --interval, revolve(--snapshots) over them: snapshots of the
//            state at interval boundaries plus one interval's CVODES data at a time.
// Prints one JSON line: variant, horizon, n, intervals, snapshots, seconds, peak_rss_bytes,
// rss_before_bytes, forward CVODES steps (first sweep), loss, grad_theta.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "peak_rss.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using rwd::bench::peak_rss_bytes;

}  // namespace

int main(int argc, char** argv) try {
  std::string variant = "rewind", vectors = "rewind", band = "lapack";
  double horizon = 10.0, interval = 0.5, rtol = 1e-6, atol = 1e-8;
  rwd::Index n = 64;
  int snapshots = 4;
  long nd = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--variant")
      variant = value;
    else if (key == "--horizon")
      horizon = std::stod(value);
    else if (key == "--interval")
      interval = std::stod(value);
    else if (key == "--n")
      n = std::stoll(value);
    else if (key == "--snapshots")
      snapshots = std::stoi(value);
    else if (key == "--nd")
      nd = std::stol(value);
    else if (key == "--rtol")
      rtol = std::stod(value);
    else if (key == "--atol")
      atol = std::stod(value);
    else if (key == "--vectors")
      vectors = value;
    else if (key == "--band")
      band = value;
    else
      throw rwd::InvalidArgument("unknown option " + key);
  }
  if (variant != "rewind" && variant != "cvodes")
    throw rwd::InvalidArgument("--variant must be rewind or cvodes");
  const rwd::Brusselator2D model(n);
  rwd::CvodesOptions options;
  options.rtol = options.rtol_adjoint = rtol;
  options.atol = {atol};
  options.atol_adjoint = options.atol_quadrature = atol;
  options.linear_solver = rwd::CvodesLinearSolver::band;
  options.steps_per_adjoint_checkpoint = nd;
  options.max_steps_per_interval = 10000000;
  if (vectors != "rewind" && vectors != "serial")
    throw rwd::InvalidArgument("--vectors must be rewind or serial");
  options.vectors = vectors == "serial" ? rwd::CvodesVectors::serial : rwd::CvodesVectors::rewind;
  if (band != "lapack" && band != "sundials")
    throw rwd::InvalidArgument("--band must be lapack or sundials");
  options.band_lapack = band == "lapack";
  const rwd::Index intervals =
      variant == "cvodes"
          ? 1
          : std::max<rwd::Index>(1, static_cast<rwd::Index>(horizon / interval + 0.5));
  rwd::CvodesIntervalStepper stepper(model, options, rwd::IntervalGrid{0.0, horizon, intervals});
  const auto objective = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
  const Eigen::VectorXd y0 = model.default_initial_state(), theta = model.default_parameters();
  const long long before = peak_rss_bytes();
  const auto start = std::chrono::steady_clock::now();
  rwd::GradientResult<Eigen::VectorXd> result;
  if (variant == "cvodes") {
    rwd::StoreAllAdjoint driver(stepper, objective);
    result = driver.run(y0, theta);
  } else {
    rwd::CheckpointOptions checkpoint;
    checkpoint.drift_policy = rwd::DriftPolicy::fail;
    rwd::CheckpointedAdjoint driver(stepper, objective, checkpoint);
    result = driver.run(y0, theta, rwd::revolve_schedule(snapshots));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json out;
  out["variant"] = variant;
  out["horizon"] = horizon;
  out["n"] = n;
  out["unknowns"] = model.state_size();
  out["intervals"] = intervals;
  out["snapshots"] = variant == "cvodes" ? 0 : snapshots;
  out["nd"] = nd;
  out["vectors"] = vectors;
  out["band"] = band;
  out["seconds"] = seconds;
  out["peak_rss_bytes"] = peak_rss_bytes();
  out["rss_before_bytes"] = before;
  out["rhs_evaluations"] = result.summary.rhs_evaluations_forward;
  out["loss"] = result.loss;
  out["grad_theta"] = std::vector<double>(result.grad_theta.data(), result.grad_theta.data() + 3);
  std::cout << out.dump() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cvodes_adjoint_compare: %s\n", e.what());
  return 1;
}
