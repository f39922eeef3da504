// bench/distributed_gray_scott_bench.cpp — one Gray–Scott gradient with its rows split across
// MPI ranks (rwd::DistributedGrayScott), for bench/parallel_scaling.py's ranks table.
//
//   mpiexec -n 2 build/bench/distributed_gray_scott_bench --n 708 --steps 200 --snapshots 10
//
// RK4, dt = 1, J = ½|y_N|², revolve on --snapshots snapshots in memory. Prints one JSON object
// (rank 0): ranks, threads, the forward sweep's and the whole gradient's seconds (the slowest
// rank's), each rank's peak RSS and snapshot bytes, the loss and dJ/dθ (identical bits on every
// rank and for every rank count — the script compares them), and the standard deviation of v at
// the end (the field must be alive for the timing to mean anything).
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "peak_rss.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

long long option(int argc, char** argv, const std::string& name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atoll(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  rwd::MpiSession mpi(argc, argv);
  const rwd::Communicator world = rwd::Communicator::world();
  const rwd::Index n = option(argc, argv, "--n", 708);
  const rwd::Index steps = option(argc, argv, "--steps", 200);
  const int snapshots = static_cast<int>(option(argc, argv, "--snapshots", 10));
  const int threads = static_cast<int>(option(argc, argv, "--threads", 1));
  rwd::set_thread_count(threads);

  const rwd::DistributedGrayScott problem(n, world);
  using B = rwd::DistributedBackend;
  const auto control = rwd::StepControl::fixed(0.0, 1.0, steps);
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(), control);
  const auto theta = rwd::DistributedGrayScott::default_parameters();
  const auto y0 = problem.default_initial_state(1);

  // The forward sweep alone.
  MPI_Barrier(world.handle());
  auto start = std::chrono::steady_clock::now();
  auto y = y0;
  rwd::Carry carry = stepper.initial_carry(y, theta);
  for (rwd::Index k = 0; k < steps; ++k) stepper.step(y, carry, theta);
  MPI_Barrier(world.handle());
  const double forward = seconds_since(start);
  // std(v) at the end: Σv and Σv² over the v rows, one global reduction.
  const double* v = y.local.data() + problem.layout().local_rows() * n;
  double local[2] = {0.0, 0.0}, total[2] = {0.0, 0.0};
  for (rwd::Index c = 0; c < problem.layout().local_rows() * n; ++c) {
    local[0] += v[c];
    local[1] += v[c] * v[c];
  }
  MPI_Allreduce(local, total, 2, MPI_DOUBLE, MPI_SUM, world.handle());
  const double cells = static_cast<double>(n * n), mean = total[0] / cells;
  const double std_v = std::sqrt(std::max(0.0, total[1] / cells - mean * mean));

  rwd::CheckpointedAdjoint driver(stepper, rwd::Objective<B>::terminal_squared_norm());
  MPI_Barrier(world.handle());
  start = std::chrono::steady_clock::now();
  const auto result = driver.run(y0, theta, rwd::revolve_schedule(snapshots));
  MPI_Barrier(world.handle());
  const double gradient = seconds_since(start);

  const double mine[2] = {
      static_cast<double>(rwd::bench::peak_rss_bytes()),
      static_cast<double>(result.summary.storage.peak_bytes_on(rwd::LevelKind::memory))};
  std::vector<double> all(2 * static_cast<std::size_t>(world.size()));
  std::vector<int> counts(static_cast<std::size_t>(world.size()), 2);
  world.all_gather(mine, counts, all);
  if (world.rank() == 0) {
    std::printf("{\"ranks\": %d, \"threads\": %d, \"n\": %lld, \"steps\": %lld, ", world.size(),
                rwd::thread_count(), static_cast<long long>(n), static_cast<long long>(steps));
    std::printf("\"forward_seconds\": %.6f, \"gradient_seconds\": %.6f, ", forward, gradient);
    std::printf("\"peak_rss_bytes\": [");
    for (int k = 0; k < world.size(); ++k) std::printf("%s%.0f", k ? ", " : "", all[2 * k]);
    std::printf("], \"snapshot_bytes\": [");
    for (int k = 0; k < world.size(); ++k) std::printf("%s%.0f", k ? ", " : "", all[2 * k + 1]);
    std::printf("], \"loss\": %.17g, \"grad_theta\": [%.17g, %.17g, %.17g, %.17g], ", result.loss,
                result.grad_theta.local[0], result.grad_theta.local[1], result.grad_theta.local[2],
                result.grad_theta.local[3]);
    std::printf("\"std_v\": %.6g}\n", std_v);
  }
  return 0;
}
