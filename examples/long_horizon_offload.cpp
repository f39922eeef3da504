// long_horizon_offload — the gradient of a 100000-step run of an 8 MiB state in a few hundred MiB
// of RAM: a few snapshots in memory, the rest in an HDF5 file, disk I/O behind the computation.
//
// The model is the 2D heat equation on a 1024 × 1024 grid (rwd::Heat2D: u' = κ∇²u + s₀g, cold
// walls, a Gaussian heater; 2^20 unknowns), stepped by explicit Euler at dt = 1 (stable and
// monotone for κ = 0.2 at every grid size). The loss is the mean squared misfit of the final
// field to a target,  J = ½ mean((u_T − d)²),  d = a quarter of the heater's shape, and we
// compute J, dJ/du_0 (2^20 numbers) and dJ/dθ, θ = (κ, s₀).
//
// Keeping every state for the reverse sweep would take (steps + 1) × 8 MiB — 781 GiB for 100000
// steps. Instead the two-level schedule (rwd::two_level_schedule) keeps --ram-snapshots states
// in memory and --disk-snapshots in a snapshot file in --disk, recomputes the rest, and places
// them to minimise the time predicted from the measured cost of a step and of a disk write and
// read. Memory stays flat as the horizon grows; only recomputation grows (logarithmically).
//
//   long_horizon_offload                      # n = 1024, 100000 steps, 4 + 64 snapshots
//   long_horizon_offload --steps 10000 --disk /scratch --json run.json
//   long_horizon_offload --n 32 --steps 200 --ram-snapshots 2 --disk-snapshots 4 --check
//
// Options: --n N (grid side, default 1024), --steps S (100000), --ram-snapshots K (4),
// --disk-snapshots D (64), --disk DIR (the system's temporary directory), --sync (disk I/O
// inline instead of on a background thread), --json FILE (the figures below, for tables),
// --check (also a finite difference of dJ/ds₀ from two more forward runs; exit 1 if it
// disagrees). Prints the problem size, the schedule, J and the gradient norms, the driver's
// summary (with its disk rows), the peak resident memory (VmHWM) and the time.
//
// Build against an installed rewind:  find_package(rewind REQUIRED)  +  rewind::rewind.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <rewind/adjoint/checkpointed_adjoint.hpp>
#include <rewind/format.hpp>
#include <rewind/problems/heat2d.hpp>
#include <rewind/rewind.hpp>
#include <rewind/schedule/schedule_simulator.hpp>
#include <rewind/schedule/schedules.hpp>
#include <rewind/store/disk_cost_probe.hpp>

namespace {

using B = rwd::EigenBackend;
using Vector = B::Vector;
using Clock = std::chrono::steady_clock;

struct Options {
  rwd::Index n = 1024;
  rwd::Index steps = 100000;
  int ram_snapshots = 4;
  int disk_snapshots = 64;
  std::filesystem::path disk;
  bool sync = false;
  bool check = false;
  std::string json;
};

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: long_horizon_offload [--n N] [--steps S] [--ram-snapshots K]\n"
               "                            [--disk-snapshots D] [--disk DIR] [--sync]\n"
               "                            [--json FILE] [--check]\n"
               "  --n N               grid side; the state has N*N unknowns (default 1024)\n"
               "  --steps S           explicit Euler steps of dt = 1 (default 100000)\n"
               "  --ram-snapshots K   snapshots kept in memory (default 4)\n"
               "  --disk-snapshots D  snapshots kept in the HDF5 file (default 64)\n"
               "  --disk DIR          directory of the snapshot file (default: temp directory)\n"
               "  --sync              disk I/O inline instead of on a background thread\n"
               "  --json FILE         write the figures as JSON\n"
               "  --check             finite-difference check of dJ/ds0 (two more forward runs)\n");
}

[[noreturn]] void bad_usage(const std::string& message) {
  std::fprintf(stderr, "long_horizon_offload: %s\n", message.c_str());
  usage(stderr);
  std::exit(2);
}

long long parse_integer(const char* option, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < lo || value > hi)
    bad_usage(std::string(option) + " " + text + ": expected an integer in [" + std::to_string(lo) +
              ", " + std::to_string(hi) + "]");
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  o.disk = std::filesystem::temp_directory_path();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) bad_usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--n") {
      o.n = parse_integer("--n", value(), rwd::Heat2D<>::kMinGridSize, rwd::Heat2D<>::kMaxGridSize);
    } else if (arg == "--steps") {
      o.steps = parse_integer("--steps", value(), 1, 1'000'000'000'000LL);
    } else if (arg == "--ram-snapshots") {
      o.ram_snapshots = static_cast<int>(parse_integer("--ram-snapshots", value(), 1, 1 << 20));
    } else if (arg == "--disk-snapshots") {
      o.disk_snapshots = static_cast<int>(parse_integer("--disk-snapshots", value(), 0, 1 << 24));
    } else if (arg == "--disk") {
      o.disk = value();
    } else if (arg == "--json") {
      o.json = value();
    } else if (arg == "--sync") {
      o.sync = true;
    } else if (arg == "--check") {
      o.check = true;
    } else {
      bad_usage("unknown option '" + arg + "'");
    }
  }
  if (!std::filesystem::is_directory(o.disk))
    bad_usage("--disk " + o.disk.string() + ": not an existing directory");
  return o;
}

// Peak resident set size (VmHWM) of this process in bytes, from /proc/self/status; -1 where
// there is no /proc (not Linux).
long long peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024LL;
  return -1;
}

double mib(double bytes) {
  return bytes / (1024.0 * 1024.0);
}

// J = ½ mean((u − d)²) of the final field, gradient (u − d)/n². No allocation per call.
rwd::Objective<B> final_misfit(Vector target) {
  const double weight = 1.0 / static_cast<double>(target.size());
  return rwd::Objective<B>([d = std::move(target), weight](double, const Vector& y, Vector& grad) {
    grad = y - d;
    const double j = 0.5 * weight * grad.squaredNorm();
    grad *= weight;
    return j;
  });
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // line by line, also into a log file
  const auto wall_start = Clock::now();

  // --- the model, its initial state and the loss ---------------------------------------------
  const rwd::Heat2D<> heat(o.n);
  const Vector theta = heat.default_parameters();  // (κ, s₀) = (0.2, 0.001)
  const Vector y0 = heat.default_initial_state();
  Vector target(heat.state_size());
  for (rwd::Index r = 0; r < o.n; ++r)
    for (rwd::Index c = 0; c < o.n; ++c) target[r * o.n + c] = 0.25 * heat.source_shape(r, c);
  const auto objective = final_misfit(std::move(target));
  const double dt = 1.0;  // < 1/(4κ) = 1.25 ≤ the Euler limit 2/(κρ) at every n
  const auto control = rwd::StepControl::fixed(0.0, dt, o.steps);
  rwd::ExplicitRungeKutta stepper(heat, rwd::ButcherTableau::euler(), control);

  const double state_bytes = static_cast<double>(heat.state_size()) * sizeof(double);
  std::printf(
      "Heat2D n = %lld: %lld unknowns, %s per snapshot; explicit Euler, dt = %g "
      "(stable up to %.3f), %lld steps\n",
      static_cast<long long>(o.n), static_cast<long long>(heat.state_size()),
      rwd::format_bytes(state_bytes).c_str(), dt, heat.max_stable_dt_euler(theta[0]),
      static_cast<long long>(o.steps));
  const double store_all_bytes = static_cast<double>(o.steps + 1) * state_bytes;
  std::printf("store-all would keep %lld states: %s\n", static_cast<long long>(o.steps + 1),
              rwd::format_bytes(store_all_bytes).c_str());

  // --- costs, measured: a forward step, an adjoint step, a snapshot write and read ------------
  // Medians of single steps, so that a moment of contention on a shared machine does not skew them.
  double step_seconds = 0.0, adjoint_factor = 1.0;
  {
    const int probe = 7;
    rwd::ExplicitRungeKutta timing(heat, rwd::ButcherTableau::euler(),
                                   rwd::StepControl::fixed(0.0, dt, probe + 1));
    Vector y = y0, y_before = y0, lambda = Vector::Zero(heat.state_size()), mu = Vector::Zero(2);
    rwd::Carry carry = timing.initial_carry(y, theta);
    timing.step(y, carry, theta);  // warm-up
    std::vector<double> forward, adjoint;
    for (int i = 0; i < probe; ++i) {
      const rwd::Carry before = carry;
      B::copy(y, y_before);
      auto start = Clock::now();
      timing.step(y, carry, theta);
      forward.push_back(rwd::seconds_since(start));
      start = Clock::now();
      timing.adjoint_step(y_before, before, theta, lambda, mu);
      adjoint.push_back(rwd::seconds_since(start));
    }
    std::nth_element(forward.begin(), forward.begin() + probe / 2, forward.end());
    std::nth_element(adjoint.begin(), adjoint.begin() + probe / 2, adjoint.end());
    step_seconds = forward[probe / 2];
    // The adjoint's cost on top of the forward step it re-runs inside (rwd::CostModel).
    adjoint_factor = std::max(0.0, adjoint[probe / 2] / step_seconds - 1.0);
  }
  const rwd::DiskCosts disk =
      rwd::measure_disk_costs(o.disk, heat.state_size(), static_cast<int>(sizeof(rwd::Carry)));
  rwd::CostModel costs;  // in units of one forward step
  costs.step_time = 1.0;
  costs.adjoint_cost_factor = adjoint_factor;
  costs.disk_write_time = disk.write_seconds / step_seconds;
  costs.disk_read_time = disk.read_seconds / step_seconds;
  std::printf(
      "measured: step %.2f ms, adjoint +%.2f steps; disk write %.2f ms (%.0f MiB/s), "
      "read %.2f ms = %.2f / %.2f steps, in %s\n",
      1e3 * step_seconds, adjoint_factor, 1e3 * disk.write_seconds,
      mib(disk.write_bytes_per_second()), 1e3 * disk.read_seconds, costs.disk_write_time,
      costs.disk_read_time, o.disk.c_str());
  // The plan, made and costed once before the run (the simulation walks its action stream,
  // integers only); the driver runs this same plan.
  const rwd::CheckpointPlan plan = rwd::plan_checkpoints(
      rwd::PlanRequest::two_level(o.ram_snapshots, o.disk_snapshots, costs), o.steps);
  const rwd::ScheduleCost planned = rwd::simulate(*plan.schedule());
  const double predicted_seconds = rwd::predicted_time(planned, costs) * step_seconds;
  std::printf(
      "plan: %s: %lld advances, %lld stores (%lld to disk), %lld restores (%lld from "
      "disk); predicted %.3g s\n",
      plan.name.c_str(), static_cast<long long>(planned.advances),
      static_cast<long long>(planned.stores), static_cast<long long>(planned.disk_stores),
      static_cast<long long>(planned.restores), static_cast<long long>(planned.disk_restores),
      predicted_seconds);
  const long long setup_rss = peak_rss_bytes();

  // --- the gradient ---------------------------------------------------------------------------
  rwd::CheckpointOptions options;
  options.disk.directory = o.disk;
  options.disk.asynchronous = !o.sync;
  rwd::CheckpointedAdjoint driver(stepper, objective, options);
  const auto run_start = Clock::now();
  const auto result = driver.run(y0, theta, plan);
  const double run_seconds = rwd::seconds_since(run_start);
  const long long peak_rss = peak_rss_bytes();
  const rwd::Summary& s = result.summary;

  std::printf("schedule: %s (%d in RAM, %d on disk)\n", s.schedule.c_str(), o.ram_snapshots,
              o.disk_snapshots);
  std::printf("J = %.15e\n|dJ/du0| = %.6e   dJ/dkappa = %+.9e   dJ/ds0 = %+.9e\n", result.loss,
              result.grad_y0.norm(), result.grad_theta[0], result.grad_theta[1]);
  std::printf("%s", s.full().c_str());
  std::printf("drift: %lld replayed states checked, %s\n",
              static_cast<long long>(result.drift.replayed_steps_checked),
              result.drift.bitwise_identical() ? "all bitwise identical" : "MISMATCHES");
  std::printf("peak RSS %s (%s before the gradient run); store-all would need %s of states\n",
              rwd::format_bytes(static_cast<double>(peak_rss)).c_str(),
              rwd::format_bytes(static_cast<double>(setup_rss)).c_str(),
              rwd::format_bytes(store_all_bytes).c_str());
  std::printf("gradient run %.2f s (predicted %.3g s), total %.2f s\n", run_seconds,
              predicted_seconds, rwd::seconds_since(wall_start));

  // --- optional check: J is quadratic in s₀, so a central difference is exact to round-off ----
  bool ok = result.drift.bitwise_identical() && std::isfinite(result.loss) &&
            result.grad_y0.allFinite() && result.grad_theta.allFinite();
  double fd = 0.0, fd_error = 0.0;
  if (o.check) {
    const double eps = 1e-3 * theta[1];
    Vector plus = theta, minus = theta;
    plus[1] += eps;
    minus[1] -= eps;
    fd = (rwd::forward_loss(stepper, objective, y0, plus) -
          rwd::forward_loss(stepper, objective, y0, minus)) /
         (2 * eps);
    fd_error = std::abs(fd - result.grad_theta[1]) / std::max(std::abs(fd), 1e-300);
    std::printf("check: finite difference dJ/ds0 = %+.9e, relative difference %.1e\n", fd,
                fd_error);
    ok = ok && fd_error < 1e-6;
  }

  if (!o.json.empty()) {
    std::FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "long_horizon_offload: cannot write %s\n", o.json.c_str());
      return 1;
    }
    std::fprintf(f, "{\n");
    std::fprintf(f, "  \"problem\": \"heat2d\",\n  \"n\": %lld,\n  \"state_size\": %lld,\n",
                 static_cast<long long>(o.n), static_cast<long long>(heat.state_size()));
    std::fprintf(f, "  \"state_bytes\": %.0f,\n  \"steps\": %lld,\n  \"dt\": %g,\n", state_bytes,
                 static_cast<long long>(o.steps), dt);
    std::fprintf(f,
                 "  \"ram_snapshots\": %d,\n  \"disk_snapshots\": %d,\n  \"asynchronous\": %s,\n",
                 o.ram_snapshots, o.disk_snapshots, o.sync ? "false" : "true");
    std::fprintf(f, "  \"disk_directory\": \"%s\",\n  \"schedule\": \"%s\",\n",
                 json_escape(o.disk.string()).c_str(), json_escape(s.schedule).c_str());
    std::fprintf(
        f, "  \"loss\": %.17g,\n  \"grad_y0_norm\": %.17g,\n  \"grad_theta\": [%.17g, %.17g],\n",
        result.loss, result.grad_y0.norm(), result.grad_theta[0], result.grad_theta[1]);
    std::fprintf(f, "  \"step_seconds\": %.6g,\n  \"adjoint_cost_factor\": %.4g,\n", step_seconds,
                 adjoint_factor);
    std::fprintf(f, "  \"probe_disk_write_seconds\": %.6g,\n  \"probe_disk_read_seconds\": %.6g,\n",
                 disk.write_seconds, disk.read_seconds);
    std::fprintf(f, "  \"predicted_seconds\": %.6g,\n", predicted_seconds);
    std::fprintf(
        f,
        "  \"seconds\": %.6g,\n  \"forward_seconds\": %.6g,\n  \"recompute_seconds\": %.6g,\n"
        "  \"reverse_seconds\": %.6g,\n",
        run_seconds, s.forward_seconds, s.recompute_seconds, s.reverse_seconds);
    std::fprintf(f, "  \"peak_rss_bytes\": %lld,\n  \"setup_rss_bytes\": %lld,\n", peak_rss,
                 setup_rss);
    std::fprintf(f, "  \"store_all_bytes\": %.0f,\n  \"peak_stored_bytes\": %lld,\n",
                 store_all_bytes,
                 static_cast<long long>(s.storage.peak_bytes_on(rwd::LevelKind::memory)));
    std::fprintf(f, "  \"forward_steps\": %lld,\n  \"recomputed_steps\": %lld,\n",
                 static_cast<long long>(s.forward_steps),
                 static_cast<long long>(s.recomputed_steps));
    std::fprintf(f,
                 "  \"stores\": %lld,\n  \"restores\": %lld,\n  \"disk_stores\": %lld,\n"
                 "  \"disk_restores\": %lld,\n  \"prefetch_hits\": %lld,\n",
                 static_cast<long long>(s.stores), static_cast<long long>(s.restores),
                 static_cast<long long>(s.storage.stores_on(rwd::LevelKind::disk)),
                 static_cast<long long>(s.storage.restores_on(rwd::LevelKind::disk)),
                 static_cast<long long>(s.storage.io.prefetch_hits));
    std::fprintf(f,
                 "  \"peak_disk_bytes\": %lld,\n  \"disk_bytes_written\": %lld,\n"
                 "  \"disk_bytes_read\": %lld,\n  \"staging_bytes\": %lld,\n",
                 static_cast<long long>(s.storage.peak_bytes_on(rwd::LevelKind::disk)),
                 static_cast<long long>(s.storage.io.bytes_written),
                 static_cast<long long>(s.storage.io.bytes_read),
                 static_cast<long long>(s.storage.io.staging_bytes));
    std::fprintf(f,
                 "  \"disk_write_seconds\": %.6g,\n  \"disk_read_seconds\": %.6g,\n"
                 "  \"disk_wait_seconds\": %.6g,\n  \"disk_hidden_seconds\": %.6g,\n",
                 s.storage.io.write_seconds, s.storage.io.read_seconds, s.storage.io.wait_seconds,
                 s.disk_hidden_seconds());
    std::fprintf(
        f,
        "  \"drift_bitwise_identical\": %s,\n  \"fd_checked\": %s,\n  \"fd_rel_error\": %.3g\n}\n",
        result.drift.bitwise_identical() ? "true" : "false", o.check ? "true" : "false", fd_error);
    std::fclose(f);
  }
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "long_horizon_offload: %s\n", e.what());
  return 1;
}
