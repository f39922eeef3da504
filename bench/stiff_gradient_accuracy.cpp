// bench/stiff_gradient_accuracy.cpp — exact discrete adjoints of the implicit Runge–Kutta
// methods against CVODES's continuous adjoint, on Robertson's kinetics in the cvsRoberts setting
// ([0, 4·10⁷], θ = (0.04, 10⁴, 3·10⁷), y0 = (1, 0, 0)), J = ½|y(T)|²: for each method and
// tolerance, the gradient's time and its error against a tightly converged reference, in one run,
// side by side.
//
//   build/bench/stiff_gradient_accuracy            # prints the table (about 10 s)
//   build/bench/stiff_gradient_accuracy --json     # one JSON line per row
//
// Methods: esdirk32 and esdirk43 (rwd::DiagonallyImplicitRungeKutta, adaptive steps at rtol,
// atol = 10⁻⁴·rtol, Newton at its defaults unless rtol < 10⁻⁸, then 10⁻²·rtol) under the
// store-all driver; rodas4 and ros34pw2 (rwd::RosenbrockStepper, adaptive steps at the same
// tolerances, no Newton iteration) likewise; bdf = rwd::CvodesIntervalStepper on one interval [0,
// T] under the store-all driver, which is CVODES's own adjoint (CVodeF/CVodeB with checkpoints in
// memory) at rtol, atol = 10⁻⁴·rtol for the forward, adjoint and quadrature problems. The
// reference: esdirk43 at rtol 10⁻¹¹ with Newton at 10⁻¹³; its agreement with BDF at 10⁻¹¹ is
// printed as a check.
//
// The error of a gradient is max_j |g_j − ref_j| / |ref_j| over θ's three components (their
// scales differ by 10¹⁰, so a norm would only see dJ/dp1). Times are the median of 3 runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/problems/robertson.hpp"

namespace {

using V = Eigen::VectorXd;

constexpr double kHorizon = 4e7;

struct Row {
  std::string method;
  double rtol = 0.0;
  rwd::Index steps = 0;
  double seconds = 0.0;
  V grad;
};

// The median time of three calls of `run`, and the last call's result.
template <class Run>
double median_seconds(Run&& run) {
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

Row implicit_gradient(const rwd::Robertson& problem, const std::string& method, double rtol,
                      double newton_rtol) {
  rwd::NewtonOptions newton;
  newton.rtol = newton_rtol;
  newton.atol = std::min(1e-12, newton_rtol * 1e-2);
  rwd::DiagonallyImplicitRungeKutta stepper(
      problem, rwd::ImplicitTableau::by_name(method),
      rwd::StepControl::adaptive(0.0, kHorizon, rtol, rtol * 1e-4), newton);
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  Row row{method, rtol, 0, 0.0, V()};
  row.seconds = median_seconds([&] {
    const auto result = driver.run(y0, theta);
    row.steps = result.summary.steps;
    row.grad = result.grad_theta;
  });
  return row;
}

Row rosenbrock_gradient(const rwd::Robertson& problem, const std::string& method, double rtol) {
  rwd::RosenbrockStepper stepper(problem, rwd::RosenbrockTableau::by_name(method),
                                 rwd::StepControl::adaptive(0.0, kHorizon, rtol, rtol * 1e-4));
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  Row row{method, rtol, 0, 0.0, V()};
  row.seconds = median_seconds([&] {
    const auto result = driver.run(y0, theta);
    row.steps = result.summary.steps;
    row.grad = result.grad_theta;
  });
  return row;
}

Row bdf_gradient(const rwd::Robertson& problem, double rtol) {
  rwd::CvodesOptions options;
  options.rtol = options.rtol_adjoint = rtol;
  options.atol = {rtol * 1e-4};
  options.atol_adjoint = options.atol_quadrature = rtol * 1e-4;
  options.linear_solver = rwd::CvodesLinearSolver::dense;
  options.max_steps_per_interval = 10000000;
  rwd::CvodesIntervalStepper stepper(problem, options, rwd::IntervalGrid{0.0, kHorizon, 1});
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  Row row{"bdf", rtol, 0, 0.0, V()};
  row.seconds = median_seconds([&] {
    const auto result = driver.run(y0, theta);
    row.steps = result.summary.rhs_evaluations_forward;  // BDF: its right-hand sides
    row.grad = result.grad_theta;
  });
  return row;
}

double max_relative_error(const V& g, const V& ref) {
  double worst = 0.0;
  for (Eigen::Index j = 0; j < ref.size(); ++j)
    worst = std::max(worst, std::abs(g[j] - ref[j]) / std::abs(ref[j]));
  return worst;
}

}  // namespace

int main(int argc, char** argv) try {
  const bool json = argc > 1 && std::string(argv[1]) == "--json";
  const rwd::Robertson problem;
  const Row reference = implicit_gradient(problem, "esdirk43", 1e-11, 1e-13);
  const Row bdf_reference = bdf_gradient(problem, 1e-11);
  std::vector<Row> rows;
  for (double rtol : {1e-4, 1e-6, 1e-8, 1e-10}) {
    const double newton = rtol < 1e-8 ? rtol * 1e-2 : 1e-10;
    rows.push_back(implicit_gradient(problem, "esdirk32", rtol, newton));
    rows.push_back(implicit_gradient(problem, "esdirk43", rtol, newton));
    rows.push_back(rosenbrock_gradient(problem, "ros34pw2", rtol));
    rows.push_back(rosenbrock_gradient(problem, "rodas4", rtol));
    rows.push_back(bdf_gradient(problem, rtol));
  }
  if (json) {
    for (const Row& r : rows) {
      nlohmann::ordered_json j;
      j["method"] = r.method;
      j["rtol"] = r.rtol;
      j["steps_or_rhs"] = r.steps;
      j["seconds"] = r.seconds;
      j["max_relative_error"] = max_relative_error(r.grad, reference.grad);
      std::cout << j.dump() << "\n";
    }
    return 0;
  }
  std::printf(
      "Robertson on [0, 4e7], J = |y(T)|^2 / 2, dJ/dtheta against esdirk43 at rtol 1e-11\n");
  std::printf("(reference vs CVODES BDF at rtol 1e-11: max relative difference %.2e)\n\n",
              max_relative_error(bdf_reference.grad, reference.grad));
  std::printf("%-9s %7s %12s %11s %14s\n", "method", "rtol", "steps (rhs)", "seconds",
              "dJ/dθ error");
  for (const Row& r : rows)
    std::printf("%-9s %7.0e %12lld %11.5f %14.2e\n", r.method.c_str(), r.rtol,
                static_cast<long long>(r.steps), r.seconds,
                max_relative_error(r.grad, reference.grad));
  std::printf(
      "\nsteps: accepted steps for esdirk*, ros34pw2 and rodas4, right-hand sides of the forward "
      "run for bdf\n");
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stiff_gradient_accuracy: %s\n", e.what());
  return 1;
}
