// bench/distributed_disk_tier_bench.cpp — the disk tier of a gradient whose state is split across
// MPI ranks: one snapshot file per rank against one file shared by every rank (parallel HDF5,
// each rank its hyperslab), side by side in one run, on the same Gray–Scott gradient.
//
//   mpiexec -n 2 build/bench/distributed_disk_tier_bench --n 708 --steps 200 --snapshots 10
//       --repeats 2 [--dir /tmp] [--thread-multiple]          (one command line)
//
// RK4, dt = 1, J = ½|y_N|², revolve on --snapshots snapshots, every one on disk. For each layout
// (alternating, --repeats times; the fastest gradient is kept) it prints, from rank 0: the
// gradient's seconds (the slowest rank's), the seconds the slowest rank spent writing and
// reading snapshots and waiting for the disk, whether I/O ran on the background thread, and at
// the end the ratio of the two layouts' gradient times and whether every gradient — on every
// rank, for both layouts and every repeat — is the same bits. --thread-multiple initialises MPI
// with MPI_THREAD_MULTIPLE, so that the shared file too is written behind on the I/O thread
// (under the default MPI_THREAD_FUNNELED it is written and read on the driver's thread).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/schedule/schedules.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

long long option(int argc, char** argv, const std::string& name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atoll(argv[i + 1]);
  return fallback;
}
std::string text_option(int argc, char** argv, const std::string& name, std::string fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}
bool flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == name) return true;
  return false;
}

double slowest(const rwd::Communicator& world, double mine) {
  double out = 0.0;
  MPI_Allreduce(&mine, &out, 1, MPI_DOUBLE, MPI_MAX, world.handle());
  return out;
}

struct Timing {
  double gradient = 1e300, write = 0.0, read = 0.0, wait = 0.0;
  bool asynchronous = false;
};

}  // namespace

int main(int argc, char** argv) {
  const bool multiple = flag(argc, argv, "--thread-multiple");
  rwd::MpiSession mpi(argc, argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED);
  const rwd::Communicator world = rwd::Communicator::world();
  const rwd::Index n = option(argc, argv, "--n", 708);
  const rwd::Index steps = option(argc, argv, "--steps", 200);
  const int snapshots = static_cast<int>(option(argc, argv, "--snapshots", 10));
  const int repeats = static_cast<int>(option(argc, argv, "--repeats", 2));
  const std::string directory = text_option(argc, argv, "--dir", "/tmp");

  const rwd::DistributedGrayScott problem(n, world);
  using B = rwd::DistributedBackend;
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 1.0, steps));
  const auto theta = rwd::DistributedGrayScott::default_parameters();
  const auto y0 = problem.default_initial_state(1);

  const rwd::RankFiles layouts[2] = {rwd::RankFiles::one_per_rank, rwd::RankFiles::shared};
  Timing best[2];
  std::uint64_t first_hash = 0;
  bool same_bits = true;
  for (int repeat = 0; repeat < repeats; ++repeat)
    for (int which = 0; which < 2; ++which) {
      rwd::CheckpointOptions options;
      options.disk.directory = directory;
      options.disk.rank_files = layouts[which];
      rwd::CheckpointedAdjoint driver(stepper, rwd::Objective<B>::terminal_squared_norm(), options);
      MPI_Barrier(world.handle());
      const auto start = std::chrono::steady_clock::now();
      const auto result = driver.run(y0, theta, rwd::on_disk(rwd::revolve_schedule(snapshots)));
      const double gradient = slowest(world, seconds_since(start));
      const auto& io = result.summary.storage.io;
      if (gradient < best[which].gradient)
        best[which] = {gradient, slowest(world, io.write_seconds), slowest(world, io.read_seconds),
                       slowest(world, io.wait_seconds), result.summary.storage.asynchronous};
      else
        for (double t : {io.write_seconds, io.read_seconds, io.wait_seconds}) slowest(world, t);
      // This rank's rows of dJ/dy0, dJ/dθ and the loss, hashed; compared over modes and ranks.
      XXH3_state_t* state = XXH3_createState();
      XXH3_64bits_reset(state);
      XXH3_64bits_update(state, result.grad_y0.local.data(),
                         sizeof(double) * static_cast<std::size_t>(result.grad_y0.local.size()));
      XXH3_64bits_update(state, result.grad_theta.local.data(), 4 * sizeof(double));
      XXH3_64bits_update(state, &result.loss, sizeof(double));
      const std::uint64_t hash = XXH3_64bits_digest(state);
      XXH3_freeState(state);
      if (repeat == 0 && which == 0) first_hash = hash;
      same_bits = !world.any(!(same_bits && hash == first_hash));
    }
  if (world.rank() == 0) {
    std::printf(
        "ranks %d, n %lld (%lld unknowns), %lld RK4 steps, revolve on %d disk snapshots "
        "of %.1f MiB per rank, MPI thread level %s, best of %d\n",
        world.size(), static_cast<long long>(n), static_cast<long long>(2 * n * n),
        static_cast<long long>(steps), snapshots,
        static_cast<double>(problem.layout().local_size()) * 8.0 / (1 << 20),
        multiple ? "MULTIPLE" : "FUNNELED", repeats);
    std::printf("%-14s %10s %10s %10s %10s %s\n", "layout", "gradient_s", "write_s", "read_s",
                "wait_s", "io thread");
    for (int which = 0; which < 2; ++which)
      std::printf("%-14s %10.3f %10.3f %10.3f %10.3f %s\n",
                  which == 0 ? "file per rank" : "shared file", best[which].gradient,
                  best[which].write, best[which].read, best[which].wait,
                  best[which].asynchronous ? "background" : "driver's thread");
    std::printf("shared / per-rank gradient time: %.3f\n", best[1].gradient / best[0].gradient);
    std::printf("gradients bitwise identical across layouts, repeats and ranks: %s\n",
                same_bits ? "yes" : "NO");
  }
  return same_bits ? 0 : 1;
}
