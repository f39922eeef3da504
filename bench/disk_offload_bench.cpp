// bench/disk_offload_bench.cpp — what moving snapshots to disk costs: the same problem and the
// same schedule run with every snapshot in memory, with the disk level through background I/O
// (write-behind, read-ahead), and with the disk level inline; then the bandwidth the snapshot
// file achieved against plain sequential writes and reads of the same bytes in the same directory.
//
//   build-bench/bench/disk_offload_bench --n 256 --steps 3000 --memory 4 --disk 32 --dir /tmp
//   bench/run_disk_offload.sh            # builds, runs, keeps the output in bench/results/
//
// Problem: Gray–Scott on an n × n grid (2n² unknowns; n = 256 is 1 MiB of state), RK4, dt = 1,
// J = ½|y_L|². Schedule: rwd::two_level_schedule(memory, disk, costs) with the step and disk costs
// measured here first (as `rewind run` does); --schedule revolve instead puts all `disk` snapshots
// of revolve(disk) on disk. Variants run interleaved, `--repeat` rounds, medians reported:
//   memory   the schedule with every slot in memory (rwd::in_memory): the same actions, no I/O
//   async    its disk slots in an HDF5 file, background thread (the default)
//   sync     the same file, writes and reads inline
// All three must give the same gradient bit for bit (checked; a mismatch exits 1).
//
// Bandwidth: `achieved` is bytes written / seconds inside snapshot writes (HDF5 + checksum), and
// the same for reads; `plain` writes the same number of snapshot-sized blocks with write(2) to a
// file in the same directory, then reads them back with read(2). Neither calls fsync: both measure
// what a run sees, through the page cache.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/store/disk_cost_probe.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Arguments {
  int n = 256;
  rwd::Index steps = 3000;
  int memory = 4;
  int disk = 32;
  int repeat = 3;
  std::string schedule = "two-level";
  std::filesystem::path dir = std::filesystem::temp_directory_path();
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "disk_offload_bench: %s needs a value\n", key.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (key == "--n")
      a.n = std::stoi(value());
    else if (key == "--steps")
      a.steps = std::stoll(value());
    else if (key == "--memory")
      a.memory = std::stoi(value());
    else if (key == "--disk")
      a.disk = std::stoi(value());
    else if (key == "--repeat")
      a.repeat = std::stoi(value());
    else if (key == "--schedule")
      a.schedule = value();
    else if (key == "--dir")
      a.dir = value();
    else {
      std::fprintf(stderr,
                   "usage: disk_offload_bench [--n N] [--steps L] [--memory K] [--disk D] "
                   "[--repeat R] [--schedule two-level|revolve] [--dir DIR]\n");
      std::exit(2);
    }
  }
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Sample {
  double wall = 0.0;
  rwd::Summary summary;
  Eigen::VectorXd grad_theta, grad_y0;
};

// Plain sequential write(2) of `blocks` blocks of `bytes`, then read(2) back: seconds of each.
std::pair<double, double> plain_io(const std::filesystem::path& dir, std::int64_t bytes,
                                   rwd::Index blocks) {
  const std::string path =
      (dir / ("rewind-plain-io-" + std::to_string(::getpid()) + ".bin")).string();
  std::vector<char> buffer(static_cast<std::size_t>(bytes), 'x');
  const auto write_start = Clock::now();
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  for (rwd::Index b = 0; b < blocks; ++b)
    if (::write(fd, buffer.data(), buffer.size()) != static_cast<ssize_t>(buffer.size()))
      std::abort();
  ::close(fd);
  const double write_s = since(write_start);
  const auto read_start = Clock::now();
  fd = ::open(path.c_str(), O_RDONLY);
  for (rwd::Index b = 0; b < blocks; ++b)
    if (::read(fd, buffer.data(), buffer.size()) != static_cast<ssize_t>(buffer.size()))
      std::abort();
  ::close(fd);
  const double read_s = since(read_start);
  std::filesystem::remove(path);
  return {write_s, read_s};
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments a = parse(argc, argv);
  rwd::GrayScott<> problem(a.n);
  const auto theta = problem.default_parameters();
  const auto y0 = problem.default_initial_state();
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 1.0, a.steps));
  const auto objective = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
  const rwd::Index n = stepper.state_size();

  // Costs, measured as `rewind run` does: one step, one snapshot write and read.
  Eigen::VectorXd y = y0;
  rwd::Carry carry = stepper.initial_carry(y, theta);
  const auto step_start = Clock::now();
  const int probe_steps = 20;
  for (int i = 0; i < probe_steps; ++i) stepper.step(y, carry, theta);
  const double step_seconds = since(step_start) / probe_steps;
  const rwd::DiskCosts disk = rwd::measure_disk_costs(a.dir, n, sizeof(rwd::Carry));
  rwd::CostModel costs;
  costs.step_time = 1.0;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = disk.write_seconds / step_seconds;
  costs.disk_read_time = disk.read_seconds / step_seconds;

  rwd::Planner base = a.schedule == "revolve" ? rwd::on_disk(rwd::revolve_schedule(a.disk))
                                              : rwd::two_level_schedule(a.memory, a.disk, costs);
  const char* names[3] = {"memory", "async", "sync"};
  std::vector<Sample> samples[3];
  for (int round = 0; round < a.repeat; ++round)
    for (int v = 0; v < 3; ++v) {
      rwd::CheckpointOptions options;
      options.disk.directory = a.dir;
      options.disk.asynchronous = v != 2;
      rwd::CheckpointedAdjoint driver(stepper, objective, options);
      const auto start = Clock::now();
      const auto result = driver.run(y0, theta, v == 0 ? rwd::in_memory(base) : base);
      Sample s;
      s.wall = since(start);
      s.summary = result.summary;
      s.grad_theta = result.grad_theta;
      s.grad_y0 = result.grad_y0;
      samples[v].push_back(std::move(s));
      std::fprintf(stderr, "round %d %-6s %.3f s\n", round, names[v], samples[v].back().wall);
    }
  for (int v = 1; v < 3; ++v)
    for (const Sample& s : samples[v])
      if (s.grad_theta != samples[0][0].grad_theta || s.grad_y0 != samples[0][0].grad_y0) {
        std::fprintf(stderr, "disk_offload_bench: %s gradient differs from memory\n", names[v]);
        return 1;
      }

  const rwd::Summary& first = samples[1][0].summary;
  std::printf(
      "disk offload: Gray-Scott n = %d (%lld unknowns, %.2f MiB per snapshot), %lld RK4 steps\n",
      a.n, static_cast<long long>(n), static_cast<double>(n * 8 + sizeof(rwd::Carry)) / 1048576.0,
      static_cast<long long>(a.steps));
  std::printf("schedule: %s, directory %s\n", first.schedule.c_str(), a.dir.c_str());
  std::printf(
      "measured: step %.3f ms, snapshot write %.3f ms, read %.3f ms -> write %.2f, read %.2f "
      "steps\n",
      1e3 * step_seconds, 1e3 * disk.write_seconds, 1e3 * disk.read_seconds, costs.disk_write_time,
      costs.disk_read_time);
  std::printf(
      "disk writes %lld, disk reads %lld (%lld read ahead), memory stores %lld, restores %lld\n",
      static_cast<long long>(first.storage.stores_on(rwd::LevelKind::disk)),
      static_cast<long long>(first.storage.restores_on(rwd::LevelKind::disk)),
      static_cast<long long>(first.storage.io.prefetch_hits),
      static_cast<long long>(first.stores - first.storage.stores_on(rwd::LevelKind::disk)),
      static_cast<long long>(first.restores - first.storage.restores_on(rwd::LevelKind::disk)));
  std::printf("gradients: bit for bit identical in all %d runs\n\n", 3 * a.repeat);
  std::printf("%-8s %10s %10s %12s %12s %12s %10s\n", "variant", "wall s", "/ memory", "disk I/O s",
              "waited s", "hidden", "peak RAM");
  const double memory_wall = median([&] {
    std::vector<double> w;
    for (const Sample& s : samples[0]) w.push_back(s.wall);
    return w;
  }());
  for (int v = 0; v < 3; ++v) {
    std::vector<double> wall, io, wait;
    for (const Sample& s : samples[v]) {
      wall.push_back(s.wall);
      io.push_back(s.summary.storage.io.write_seconds + s.summary.storage.io.read_seconds);
      wait.push_back(s.summary.storage.io.wait_seconds);
    }
    const rwd::Summary& s = samples[v][0].summary;
    const double io_m = median(io), wait_m = median(wait);
    std::printf("%-8s %10.3f %10.3f %12.3f %12.3f %11.0f%% %7.1f MiB\n", names[v], median(wall),
                median(wall) / memory_wall, io_m, wait_m,
                io_m > 0 ? 100.0 * std::max(io_m - wait_m, 0.0) / io_m : 0.0,
                static_cast<double>(s.storage.peak_bytes_on(rwd::LevelKind::memory) +
                                    s.storage.io.staging_bytes) /
                    1048576.0);
  }

  // Bandwidth of the snapshot file against plain sequential I/O of the same bytes.
  const rwd::Summary& sync = samples[2][0].summary;
  const std::int64_t block = n * 8 + static_cast<std::int64_t>(sizeof(rwd::Carry));
  const rwd::Index blocks = std::max<rwd::Index>(sync.storage.stores_on(rwd::LevelKind::disk), 1);
  std::vector<double> plain_w, plain_r;
  for (int r = 0; r < a.repeat; ++r) {
    const auto [w, rd] = plain_io(a.dir, block, blocks);
    plain_w.push_back(w);
    plain_r.push_back(rd);
  }
  const double mb = 1e6;
  const double achieved_w =
      static_cast<double>(sync.storage.io.bytes_written) / sync.storage.io.write_seconds / mb;
  const double achieved_r =
      static_cast<double>(sync.storage.io.bytes_read) / sync.storage.io.read_seconds / mb;
  const double plain_write = static_cast<double>(blocks * block) / median(plain_w) / mb;
  const double plain_read = static_cast<double>(blocks * block) / median(plain_r) / mb;
  std::printf("\nbandwidth (MB/s)   snapshot file   plain write(2)/read(2)   ratio\n");
  std::printf("  write          %14.0f %24.0f %7.2f\n", achieved_w, plain_write,
              achieved_w / plain_write);
  std::printf("  read           %14.0f %24.0f %7.2f\n", achieved_r, plain_read,
              achieved_r / plain_read);
  return 0;
}
