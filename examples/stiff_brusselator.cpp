// stiff_brusselator — the gradient of a stiff semi-discretised PDE through BDF (SUNDIALS CVODES),
// checkpointed across macro-intervals so memory does not grow with the horizon.
//
// The model is the 2D Brusselator (rwd::Brusselator2D: u' = A + u²v − (B+1)u + α∇²u,
// v' = Bu − u²v + α∇²v on an n × n grid, no-flux walls; 2n² unknowns). CVODES integrates it with
// variable-order BDF and Newton iterations whose linear systems are banded (LAPACK band LU) or
// solved matrix-free (--gmres: SPGMR with the model's exact Jacobian-vector products). The
// horizon is cut into intervals; rwd::CheckpointedAdjoint runs revolve over them, and within an
// interval being reversed CVODES's own adjoint (CVodeF/CVodeB) does the work. J = ½|y_T|²; we
// compute dJ/dθ for θ = (A, B, α) and dJ/dy0 — and, with --check, confirm dJ/dα by central
// differences of two more forward runs (a continuous adjoint: agreement to a multiple of rtol).
//
//   stiff_brusselator                         # n = 64 (8192 unknowns), T = 10, 5 intervals,
//   revolve(3) stiff_brusselator --n 128 --t-final 4     # 32768 unknowns stiff_brusselator --n 16
//   --gmres --check  # matrix-free, with the finite-difference check
//
// Options: --n N (64), --t-final T (10), --intervals M (5), --snapshots C (3), --rtol (1e-6),
// --atol (1e-8), --gmres, --check (exit 1 if dJ/dα and the differences disagree beyond 10⁴·rtol).
//
// Build against an installed rewind:  find_package(rewind REQUIRED)  +  rewind::rewind.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <rewind/adjoint/checkpointed_adjoint.hpp>
#include <rewind/adjoint/forward_loss.hpp>
#include <rewind/format.hpp>
#include <rewind/integrators/cvodes_interval_stepper.hpp>
#include <rewind/problems/brusselator2d.hpp>
#include <rewind/schedule/schedules.hpp>

int main(int argc, char** argv) try {
  rwd::Index n = 64, intervals = 5;
  double t_final = 10.0, rtol = 1e-6, atol = 1e-8;
  int snapshots = 3;
  bool gmres = false, check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw rwd::InvalidArgument(arg + " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--n")
      n = std::stoll(value());
    else if (arg == "--t-final")
      t_final = std::stod(value());
    else if (arg == "--intervals")
      intervals = std::stoll(value());
    else if (arg == "--snapshots")
      snapshots = std::stoi(value());
    else if (arg == "--rtol")
      rtol = std::stod(value());
    else if (arg == "--atol")
      atol = std::stod(value());
    else if (arg == "--gmres")
      gmres = true;
    else if (arg == "--check")
      check = true;
    else
      throw rwd::InvalidArgument("unknown option " + arg +
                                 " (see the top of stiff_brusselator.cpp)");
  }

  const rwd::Brusselator2D model(n);
  rwd::CvodesOptions bdf;
  bdf.rtol = bdf.rtol_adjoint = rtol;
  bdf.atol = {atol};
  bdf.atol_adjoint = bdf.atol_quadrature = atol;
  bdf.linear_solver = gmres ? rwd::CvodesLinearSolver::gmres : rwd::CvodesLinearSolver::band;
  rwd::CvodesIntervalStepper stepper(model, bdf, rwd::IntervalGrid{0.0, t_final, intervals});

  const auto J = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
  rwd::CheckpointOptions options;
  options.drift_policy = rwd::DriftPolicy::fail;  // every replay must restart CVODES identically
  rwd::CheckpointedAdjoint driver(stepper, J, options);
  const Eigen::VectorXd y0 = model.default_initial_state(), theta = model.default_parameters();

  std::printf(
      "Brusselator %lld x %lld: %lld unknowns, BDF (%s), rtol %g, T = %g in %lld intervals, "
      "revolve(%d)\n",
      static_cast<long long>(n), static_cast<long long>(n),
      static_cast<long long>(model.state_size()), gmres ? "matrix-free GMRES" : "band LU", rtol,
      t_final, static_cast<long long>(intervals), snapshots);
  const auto start = std::chrono::steady_clock::now();
  const auto result = driver.run(y0, theta, rwd::revolve_schedule(snapshots));
  const double seconds = rwd::seconds_since(start);
  std::printf("J = %.12e\ndJ/d(A, B, alpha) = (%.8e, %.8e, %.8e), |dJ/dy0| = %.6e\n", result.loss,
              result.grad_theta[0], result.grad_theta[1], result.grad_theta[2],
              result.grad_y0.norm());
  std::printf("%s\ntime %.2f s; replays bitwise identical: %s\n", result.summary.brief().c_str(),
              seconds, result.drift.bitwise_identical() ? "yes" : "no");

  if (check) {
    const double h = 1e-4 * theta[2];
    Eigen::VectorXd plus = theta, minus = theta;
    plus[2] += h;
    minus[2] -= h;
    const double fd =
        (rwd::forward_loss(stepper, J, y0, plus) - rwd::forward_loss(stepper, J, y0, minus)) /
        (2 * h);
    const double rel = std::abs(fd - result.grad_theta[2]) / std::max(std::abs(fd), 1e-300);
    std::printf("finite differences: dJ/dalpha = %.8e, relative difference %.2e (allowed %.0e)\n",
                fd, rel, 1e4 * rtol);
    if (!(rel <= 1e4 * rtol)) return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stiff_brusselator: %s\n", e.what());
  return 1;
}
