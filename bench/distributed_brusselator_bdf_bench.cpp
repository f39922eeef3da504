// bench/distributed_brusselator_bdf_bench.cpp — one BDF (CVODES, matrix-free GMRES) gradient of
// the 2D Brusselator with its rows split across MPI ranks (rwd::DistributedBrusselator on
// rewind's distributed N_Vector), timed, beside the one-process Brusselator2D on the Eigen
// N_Vector for reference.
//
//   mpiexec -n 2 build/bench/distributed_brusselator_bdf_bench --n 64 --intervals 10 --t 5
//   build/bench/distributed_brusselator_bdf_bench --n 64 --serial 1      # Brusselator2D, Eigen
//
// J = ½|y(T)|², revolve on --snapshots snapshots over the intervals. Prints one JSON object
// (rank 0): ranks, threads, the forward sweep's and the whole gradient's seconds (the slowest
// rank's), CVODES's right-hand-side and vjp counts, the loss, dJ/dθ and |dJ/dy0|² — identical
// bits for every rank count (the serial run's differ in the last digits: the Eigen N_Vector
// folds its sums in other blocks).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/distributed/distributed_brusselator.hpp"
#include "rewind/distributed/distributed_cvodes.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double option(int argc, char** argv, const std::string& name, double fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atof(argv[i + 1]);
  return fallback;
}

struct Settings {
  rwd::Index n, intervals;
  double t_final;
  int snapshots;
};

// Forward sweep, then the gradient; prints the JSON line on rank 0.
template <class Problem, class Backend>
void run(const Problem& problem, const typename Backend::Vector& y0,
         const typename Backend::Vector& theta, const Settings& s, MPI_Comm comm, int rank,
         int ranks) {
  rwd::CvodesOptions bdf;
  bdf.linear_solver = rwd::CvodesLinearSolver::gmres;
  bdf.rtol = 1e-5;
  bdf.atol = {1e-7};
  bdf.rtol_adjoint = 1e-5;
  bdf.atol_adjoint = 1e-7;
  rwd::CvodesIntervalStepper stepper(problem, bdf, rwd::IntervalGrid{0.0, s.t_final, s.intervals});
  MPI_Barrier(comm);
  auto start = std::chrono::steady_clock::now();
  auto y = y0;
  rwd::Carry carry = stepper.initial_carry(y, theta);
  for (rwd::Index k = 0; k < s.intervals; ++k) stepper.step(y, carry, theta);
  MPI_Barrier(comm);
  const double forward = seconds_since(start);
  stepper.reset_counters();

  rwd::CheckpointedAdjoint driver(stepper, rwd::Objective<Backend>::terminal_squared_norm());
  MPI_Barrier(comm);
  start = std::chrono::steady_clock::now();
  const auto r = driver.run(y0, theta, rwd::revolve_schedule(s.snapshots));
  MPI_Barrier(comm);
  const double gradient = seconds_since(start);
  const double g2 = Backend::dot(r.grad_y0, r.grad_y0);
  const double* gt = Backend::data(r.grad_theta);
  if (rank == 0)
    std::printf(
        "{\"ranks\": %d, \"threads\": %d, \"n\": %lld, \"intervals\": %lld, \"backend\": \"%s\", "
        "\"forward_seconds\": %.4f, \"gradient_seconds\": %.4f, \"rhs\": %lld, \"vjp\": %lld, "
        "\"loss\": %.17g, \"grad_theta\": [%.17g, %.17g, %.17g], \"grad_y0_squared\": %.17g}\n",
        ranks, rwd::thread_count(), static_cast<long long>(s.n),
        static_cast<long long>(s.intervals), Backend::name, forward, gradient,
        static_cast<long long>(stepper.counters().rhs_evaluations),
        static_cast<long long>(stepper.counters().vjp_evaluations), r.loss, gt[0], gt[1], gt[2],
        g2);
}

}  // namespace

int main(int argc, char** argv) {
  rwd::MpiSession mpi(argc, argv);
  const rwd::Communicator world = rwd::Communicator::world();
  const Settings s{static_cast<rwd::Index>(option(argc, argv, "--n", 64)),
                   static_cast<rwd::Index>(option(argc, argv, "--intervals", 10)),
                   option(argc, argv, "--t", 5.0),
                   static_cast<int>(option(argc, argv, "--snapshots", 4))};
  rwd::set_thread_count(static_cast<int>(option(argc, argv, "--threads", 1)));
  if (option(argc, argv, "--serial", 0) != 0) {
    const rwd::Brusselator2D problem(s.n);
    run<rwd::Brusselator2D, rwd::EigenBackend>(problem, problem.default_initial_state(),
                                               problem.default_parameters(), s, MPI_COMM_SELF, 0,
                                               1);
    return 0;
  }
  const rwd::DistributedBrusselator problem(s.n, world);
  run<rwd::DistributedBrusselator, rwd::DistributedBackend>(
      problem, problem.default_initial_state(), rwd::DistributedBrusselator::default_parameters(),
      s, world.handle(), world.rank(), world.size());
  return 0;
}
