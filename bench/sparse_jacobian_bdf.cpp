// bench/sparse_jacobian_bdf.cpp — the BDF gradient of the 2-D Brusselator with each of CVODES's
// linear solvers: the built-in problem (rwd::Brusselator2D, species interleaved per cell, band
// half-width 2n) with the band solver and difference-quotient Jacobians, and the same PDE as a
// stencil model (tests/problems/models/stencil_models.hpp: fields stored whole, so its band is n²
// wide) with the sparse direct solver (KLU, the model's own Jacobian values), GMRES, or band.
// bench/run_sparse_jacobian.sh runs the cases and prints the table of
// bench/results/sparse_jacobian.md.
//
//   sparse_jacobian_bdf --case band-builtin|sparse-stencil|gmres-stencil|band-stencil
//                       [--n 64] [--horizon 2] [--intervals 4] [--repeat 3]
//
// One gradient: J = ½|y_T|², store-all over `intervals` macro-intervals of [0, horizon], default
// tolerances (rtol 1e-6, atol 1e-8, adjoint alike), one thread (rwd::set_thread_count(1)).
// Prints one JSON line: case, n, unknowns, horizon, intervals, seconds (the fastest of `repeat`
// runs, wall clock), every run's seconds, CVODES's forward rhs and backward vjp evaluations, loss,
// grad_theta.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/stencil_model.hpp"

namespace {

using V = Eigen::VectorXd;

struct Settings {
  std::string name = "sparse-stencil";
  rwd::Index n = 64;
  double horizon = 2.0;
  rwd::Index intervals = 4;
  int repeat = 3;
};

// The built-in's interleaved state (u₀, v₀, u₁, v₁, …) with each field whole ([u; v]).
V fields_whole(const V& interleaved) {
  const rwd::Index cells = interleaved.size() / 2;
  V y(interleaved.size());
  for (rwd::Index k = 0; k < 2; ++k)
    for (rwd::Index c = 0; c < cells; ++c) y[k * cells + c] = interleaved[2 * c + k];
  return y;
}

template <class P>
nlohmann::json time_gradient(const Settings& s, const P& problem, const V& y0, const V& theta,
                             rwd::CvodesOptions options) {
  rwd::CvodesIntervalStepper stepper(problem, options,
                                     rwd::IntervalGrid{0.0, s.horizon, s.intervals});
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  std::vector<double> seconds;
  double loss = 0.0;
  V grad_theta;
  for (int r = 0; r < s.repeat; ++r) {
    stepper.reset_counters();
    const auto start = std::chrono::steady_clock::now();
    const auto result = driver.run(y0, theta);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    loss = result.loss;
    grad_theta = result.grad_theta;
  }
  return {{"seconds", *std::min_element(seconds.begin(), seconds.end())},
          {"runs", seconds},
          {"rhs_evaluations", stepper.counters().rhs_evaluations},
          {"vjp_evaluations", stepper.counters().vjp_evaluations},
          {"loss", loss},
          {"grad_theta", std::vector<double>(grad_theta.data(), grad_theta.data() + 3)}};
}

}  // namespace

int main(int argc, char** argv) try {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--case")
      s.name = value;
    else if (key == "--n")
      s.n = std::stoll(value);
    else if (key == "--horizon")
      s.horizon = std::stod(value);
    else if (key == "--intervals")
      s.intervals = std::stoll(value);
    else if (key == "--repeat")
      s.repeat = std::stoi(value);
    else
      throw std::invalid_argument("unknown option " + key);
  }
  rwd::set_thread_count(1);
  const rwd::Brusselator2D built_in(s.n);
  const V theta = built_in.default_parameters();
  const auto stencil = rwd::stencil_problem(rwd::testing::BrusselatorStencil{}, s.n, s.n);
  rwd::CvodesOptions options;
  nlohmann::json timing;
  if (s.name == "band-builtin") {
    options.linear_solver = rwd::CvodesLinearSolver::band;
    timing = time_gradient(s, built_in, built_in.default_initial_state(), theta, options);
  } else {
    const V y0 = fields_whole(built_in.default_initial_state());
    if (s.name == "sparse-stencil") {
      options.linear_solver = rwd::CvodesLinearSolver::sparse;
    } else if (s.name == "gmres-stencil") {
      options.linear_solver = rwd::CvodesLinearSolver::gmres;
    } else if (s.name == "band-stencil") {
      options.linear_solver = rwd::CvodesLinearSolver::band;
      options.band_upper = options.band_lower = s.n * s.n;  // u at a cell ↔ v at the same cell
    } else {
      throw std::invalid_argument("unknown case " + s.name);
    }
    timing = time_gradient(s, stencil, y0, theta, options);
  }
  nlohmann::json line = {{"case", s.name},
                         {"n", s.n},
                         {"unknowns", 2 * s.n * s.n},
                         {"horizon", s.horizon},
                         {"intervals", s.intervals}};
  line.update(timing);
  std::cout << line.dump() << std::endl;
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "sparse_jacobian_bdf: %s\n", e.what());
  return 1;
}
