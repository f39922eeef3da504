// bench/checkpoint_memory_time.cpp — memory and time of one long gradient, store-all against
// revolve, one variant per process (so that the peak RSS is that variant's alone).
//
//   build-bench/bench/checkpoint_memory_time --variant revolve --snapshots 20 --n 71 --steps 100000
//   build-bench/bench/checkpoint_memory_time --variant store-all --n 71 --steps 100000
//   bench/run_checkpoint_compare.sh        # all variants side by side, as a table
//
// The problem: Gray–Scott on an n × n periodic grid (2n² unknowns; n = 71 gives 10082), RK4 with
// a fixed step dt = 1, L steps, J = ½|y_L|², gradient with respect to θ = (D_u, D_v, F, k) and y_0.
// Drivers: `store-all` is rwd::StoreAllAdjoint (every state kept: L · (8·2n² + carry) bytes, 8 GB
// for 10^4 unknowns × 10^5 steps); `revolve` is rwd::CheckpointedAdjoint with
// rwd::revolve_schedule(C) (C snapshots, y_0's included) and its default options (drift monitor
// on, finite checks on). --max-fingerprints M sets the drift monitor's budget
// (CheckpointOptions::max_fingerprints, default 65536: every 2nd state fingerprinted at L = 10^5);
// M = 1 fingerprints only y_0, i.e. switches the monitor off in effect, to show what it costs.
//
// Prints one JSON line on stdout (progress goes to stderr). Its fields:
//   variant, schedule, snapshots, steps, grid, unknowns, dt
//   wall_seconds            the gradient: driver.run() alone, wall clock (store-all: includes
//                           allocating and first-touching its states)
//   process_seconds         the whole process (forward-only runs and calibration included)
//   cpu_seconds             thread CPU time of driver.run()
//   forward_seconds, recompute_seconds, reverse_seconds     the driver's own split (Summary)
//   forward_steps, recomputed_steps                          as the Summary reports them
//   advances, replayed_steps   steps run forward outside reverse steps, and of those the ones a
//                           replay from a snapshot ran again (revolve: from the schedule simulator;
//                           store-all: L and 0): counts that do not depend on Summary's convention
//   stores, restores, peak_stored_bytes
//   peak_rss_bytes          getrusage(RUSAGE_SELF).ru_maxrss · 1024: the process's high-water mark
//   rss_before_gradient_bytes   VmRSS just before driver.run() (the baseline under the peak)
//   loss, grad_theta, grad_theta_hash, grad_y0_hash   FNV-1a 64 of the gradients' bytes: equal
//                           hashes across variants mean bit-for-bit equal gradients
//   drift_bitwise_identical, drift_checked       the drift monitor's verdict (revolve only)
//   forward_only_seconds    rwd::forward_loss over the same L steps (stores nothing), mean of one
//                           run first and one last in the process (forward_only_runs: both)
//   measured_ratio          wall_seconds / forward_only_seconds
//   measured_ratio_cpu      the same from thread CPU times
//   predicted_seconds, predicted_ratio, prediction_error
//                           the cost model's time and time / forward_only_seconds;
//                           prediction_error = measured / predicted − 1
//   untimed_seconds         wall_seconds − (forward + recompute + reverse seconds): what the
//                           driver's timers do not see (revolve: snapshot copies and the action
//                           loop; store-all: allocating the L stored states before its first step)
//   predicted_timed_seconds, prediction_error_timed
//                           the model's step and adjoint terms alone (no write/read terms) against
//                           forward + recompute + reverse seconds: the prediction without the I/O
//                           and allocation part
//   predicted_self_seconds, prediction_error_self
//                           the same model with step_time and adjoint factor taken from the
//                           measured run's own Summary (first-sweep seconds / first-sweep steps,
//                           reverse seconds / L) and the calibrated snapshot I/O: for revolve it
//                           predicts the recomputation only: a check of the counts alone
//   predicted_ratio_counts_only   rwd::predicted_time_ratio with step_time = the forward-only step
//                           and the adjoint factor from the calibration, snapshot I/O free and no
//                           driver overhead: what the step counts alone predict
//   calibration { ... }     the per-operation times the prediction uses (below), each run's too
//
// Prediction. The schedule simulator counts the operations of the full run: ScheduleCost from
// rwd::simulate(RevolveSchedule(L, C)) (or StoreAllSchedule(L)). Per-operation times come from a
// short calibration gradient of the same variant on the same problem, run in this process:
// --calibration-steps steps (default min(L, 2000) for revolve; min(L, 10000) for store-all, so
// that, as in the measured run, most of its reverse sweep reads states from RAM and not from the
// 32 MB L3), --calibration-runs times (default 4: half just before the measured gradient, half
// just after, so that a slow drift of the machine's load affects both sides alike), medians of
// each per-operation time. The calibration gradients start from y_S, S = --calibration-start
// (default min(5000, L/2)), not from y_0: the first ~1500 steps after the seeded initial state run
// 20–40% slower per step than the rest of a long run (measured, see
// bench/results/checkpointing.md), and would bias a calibration taken there:
//   revolve:   step_time     = (forward + recompute seconds) / advances  — one driver advance:
//                              RK4 step, finite check, and the drift monitor's fingerprint, taken
//                              every `stride`-th step; the calibration run uses the same stride as
//                              the measured run (its max_fingerprints is scaled down to match);
//              adjoint factor = (reverse seconds / steps) / step_time − 1;
//              write_time = read_time = (run wall − the three timed parts) / (stores + restores):
//                              the snapshot copies plus everything else the driver's timers miss.
//   store-all: step_time     = forward seconds / steps (RK4 step + copy of the state into RAM),
//              adjoint factor = (reverse seconds / steps) / step_time − 1,
//              write_time    = (run wall − forward − reverse) / steps: allocating and zeroing each
//                              stored state (page faults) before the forward sweep; read_time = 0
//                              (the reverse step reads the stored state in place).
// predicted_seconds = rwd::predicted_time(cost, model). The calibration's snapshots are as many as
// the measured run's (revolve), so cache behaviour matches; store-all's calibration states go
// through RAM like the measured run's.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/rewind.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/schedule/store_all_schedule.hpp"

namespace {

using rwd::Index;
using B = rwd::EigenBackend;
using Vec = B::Vector;
using Problem = rwd::GrayScott<B>;
using Stepper = rwd::ExplicitRungeKutta<Problem>;
using Clock = std::chrono::steady_clock;

const Index kDefaultMaxFingerprints = rwd::CheckpointOptions{}.max_fingerprints;

struct Args {
  std::string variant = "revolve";
  int snapshots = 20;
  Index grid = 71;
  Index steps = 100000;
  double dt = 1.0;
  Index calibration_steps = 0;   // 0: 2000 for revolve, 10000 for store-all (see the header)
  Index calibration_start = -1;  // −1: min(5000, L / 2)
  int calibration_runs = 4;
  Index max_fingerprints = kDefaultMaxFingerprints;  // the drift monitor's (revolve)
  std::uint64_t seed = 0;
};

[[noreturn]] void usage(const std::string& error) {
  std::cerr
      << "checkpoint_memory_time: " << error << "\n"
      << "usage: checkpoint_memory_time --variant store-all|revolve [--snapshots C] [--n GRID]\n"
      << "         [--steps L] [--dt DT] [--calibration-steps K] [--calibration-runs R]\n"
      << "         [--calibration-start S] [--max-fingerprints M] [--seed S]\n"
      << "defaults: --snapshots 20 --n 71 --steps 100000 --dt 1 --calibration-steps 2000"
         " (revolve)\n          or 10000 (store-all) --calibration-runs 4 --calibration-start"
         " min(5000, L/2)\n          --max-fingerprints "
      << kDefaultMaxFingerprints << " --seed 0\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "-h" || key == "--help") usage("help");
    if (i + 1 >= argc) usage("missing value after " + key);
    const std::string value = argv[++i];
    try {
      if (key == "--variant")
        a.variant = value;
      else if (key == "--snapshots")
        a.snapshots = std::stoi(value);
      else if (key == "--n")
        a.grid = std::stoll(value);
      else if (key == "--steps")
        a.steps = std::stoll(value);
      else if (key == "--dt")
        a.dt = std::stod(value);
      else if (key == "--calibration-steps")
        a.calibration_steps = std::stoll(value);
      else if (key == "--calibration-runs")
        a.calibration_runs = std::stoi(value);
      else if (key == "--calibration-start")
        a.calibration_start = std::stoll(value);
      else if (key == "--max-fingerprints")
        a.max_fingerprints = std::stoll(value);
      else if (key == "--seed")
        a.seed = std::stoull(value);
      else
        usage("unknown option " + key);
    } catch (const std::logic_error&) {
      usage("bad value '" + value + "' for " + key);
    }
  }
  if (a.variant != "store-all" && a.variant != "revolve")
    usage("--variant must be store-all or revolve");
  if (a.snapshots < 1) usage("--snapshots must be >= 1");
  if (a.steps < 2) usage("--steps must be >= 2");
  if (a.calibration_steps == 0)
    a.calibration_steps = std::min<Index>(a.steps, a.variant == "revolve" ? 2000 : 10000);
  if (a.calibration_steps < 2) usage("--calibration-steps must be >= 2");
  if (a.calibration_start < 0) a.calibration_start = std::min<Index>(5000, a.steps / 2);
  if (a.max_fingerprints < 1) usage("--max-fingerprints must be >= 1");
  if (a.calibration_runs < 1) usage("--calibration-runs must be >= 1");
  return a;
}

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

std::int64_t current_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string fnv1a_hex(const Vec& x) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(x.data());
  for (std::size_t i = 0; i < static_cast<std::size_t>(x.size()) * sizeof(double); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

std::string num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ",";
    out += num(v[i]);
  }
  return out + "]";
}

std::string str(const std::string& s) {
  return "\"" + s + "\"";  // only our own names: no characters that need escaping
}

void progress(const std::string& message) {
  std::cerr << "[checkpoint_memory_time] " << message << std::endl;
}

// The drift monitor fingerprints every stride-th step, stride = ⌊l / m⌋ + 1 for m max
// fingerprints (drift_monitor.hpp). The max_fingerprints that gives a short calibration run of
// `steps` the stride of the measured run.
Index matching_max_fingerprints(Index steps, Index stride) {
  if (stride <= 1) return steps + 1;
  return std::max<Index>(1, steps / (stride - 1));
}

// One forward sweep that stores nothing; (wall, thread CPU) seconds.
std::pair<double, double> time_forward(const Problem& problem, const Args& a, const Vec& y0,
                                       const Vec& theta) {
  Stepper stepper(problem, rwd::ButcherTableau::rk4(), rwd::StepControl::fixed(0.0, a.dt, a.steps));
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  const double cpu = thread_cpu_seconds();
  const auto start = Clock::now();
  const double loss = rwd::forward_loss(stepper, objective, y0, theta);
  const double wall = since(start);
  const double cpu_s = thread_cpu_seconds() - cpu;
  if (!std::isfinite(loss)) throw std::runtime_error("forward run gave a non-finite loss");
  return {wall, cpu_s};
}

// Per-operation times from short calibration gradients: each run's values, medians on demand.
struct Calibration {
  Index steps = 0;
  Index stride = 1;                  // drift sampling stride (revolve)
  std::vector<double> step_runs;     // s per advance (store-all: per forward step, store included)
  std::vector<double> reverse_runs;  // s per reverse step
  std::vector<double> io_runs;  // s per store/restore (revolve), per allocated state (store-all)

  double step_time() const { return median(step_runs); }
  double reverse_time() const { return median(reverse_runs); }
  double io_time() const { return median(io_runs); }
};

void calibrate_revolve(Calibration& c, int runs, const Problem& problem, const Args& a,
                       const Vec& y0, const Vec& theta, Index stride) {
  c.steps = a.calibration_steps;
  Stepper stepper(problem, rwd::ButcherTableau::rk4(),
                  rwd::StepControl::fixed(static_cast<double>(a.calibration_start) * a.dt, a.dt,
                                          a.calibration_steps));
  rwd::CheckpointOptions options;
  options.max_fingerprints = matching_max_fingerprints(a.calibration_steps, stride);
  rwd::CheckpointedAdjoint driver(stepper, rwd::Objective<B>::terminal_squared_norm(), options);
  rwd::RevolveSchedule schedule(a.calibration_steps, a.snapshots);
  const rwd::ScheduleCost cost = rwd::simulate(schedule);
  for (int run = 0; run < runs; ++run) {
    const auto start = Clock::now();
    const auto r = driver.run(y0, theta, rwd::revolve_schedule(a.snapshots));
    const double wall = since(start);
    const auto& s = r.summary;
    c.stride = r.drift.sampling_stride;
    c.step_runs.push_back((s.forward_seconds + s.recompute_seconds) /
                          static_cast<double>(cost.advances));
    c.reverse_runs.push_back(s.reverse_seconds / static_cast<double>(a.calibration_steps));
    const double rest = std::max(0.0, wall - s.total_seconds());
    c.io_runs.push_back(rest /
                        static_cast<double>(std::max<Index>(1, cost.stores + cost.restores)));
  }
}

void calibrate_store_all(Calibration& c, int runs, const Problem& problem, const Args& a,
                         const Vec& y0, const Vec& theta) {
  c.steps = a.calibration_steps;
  Stepper stepper(problem, rwd::ButcherTableau::rk4(),
                  rwd::StepControl::fixed(static_cast<double>(a.calibration_start) * a.dt, a.dt,
                                          a.calibration_steps));
  const double l = static_cast<double>(a.calibration_steps);
  for (int run = 0; run < runs; ++run) {
    // A fresh driver each time, as in the measured run: its states are allocated (and their pages
    // faulted in) inside run(); destroying it gives the memory back to the system.
    rwd::StoreAllAdjoint driver(stepper, rwd::Objective<B>::terminal_squared_norm());
    const auto start = Clock::now();
    const auto r = driver.run(y0, theta);
    const double wall = since(start);
    const auto& s = r.summary;
    c.step_runs.push_back(s.forward_seconds / l);
    c.reverse_runs.push_back(s.reverse_seconds / l);
    c.io_runs.push_back(std::max(0.0, wall - s.forward_seconds - s.reverse_seconds) / l);
  }
}

int run(const Args& a) {
  const auto process_start = Clock::now();
  const bool revolve = a.variant == "revolve";
  const Problem problem(a.grid);
  const Vec theta = problem.default_parameters();
  const Vec y0 = problem.default_initial_state(a.seed);
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  const Index l = a.steps;

  // The operation counts of the measured run, from the schedule simulator (integers only).
  rwd::ScheduleCost cost;
  if (revolve) {
    rwd::RevolveSchedule schedule(l, a.snapshots);
    cost = rwd::simulate(schedule);
  } else {
    rwd::StoreAllSchedule schedule(l);
    cost = rwd::simulate(schedule);
  }

  progress("forward-only run 1 (" + std::to_string(l) + " steps)");
  const auto [fwd1, fwd1_cpu] = time_forward(problem, a, y0, theta);

  // The drift monitor's sampling stride of the measured run (drift_monitor.hpp).
  const Index stride = std::max<Index>(1, (l + a.max_fingerprints) / a.max_fingerprints);
  // The calibration starts from y_S, past the start-up transient of the seeded initial state (the
  // first ~1500 steps measured 20–40% slower per step than the rest of a 10^5-step run).
  Vec y_cal = B::zeros(problem.state_size());
  if (a.calibration_start > 0) {
    Stepper warm(problem, rwd::ButcherTableau::rk4(),
                 rwd::StepControl::fixed(0.0, a.dt, a.calibration_start));
    rwd::forward_loss(warm, objective, y0, theta, &y_cal);
  } else {
    B::copy(y0, y_cal);
  }
  Calibration cal;
  auto calibrate = [&](int runs) {
    if (runs < 1) return;
    progress("calibration (" + std::to_string(runs) + " x " + std::to_string(a.calibration_steps) +
             " steps)");
    if (revolve)
      calibrate_revolve(cal, runs, problem, a, y_cal, theta, stride);
    else
      calibrate_store_all(cal, runs, problem, a, y_cal, theta);
  };
  calibrate((a.calibration_runs + 1) / 2);  // half before the measured gradient, half after

  progress("gradient (" + a.variant + (revolve ? ", c = " + std::to_string(a.snapshots) : "") +
           ")");
  Stepper stepper(problem, rwd::ButcherTableau::rk4(), rwd::StepControl::fixed(0.0, a.dt, l));
  rwd::GradientResult<Vec> result;
  rwd::DriftReport drift;
  bool have_drift = false;
  const std::int64_t rss_before = current_rss_bytes();
  double wall = 0.0, cpu = 0.0;
  {
    const double cpu0 = thread_cpu_seconds();
    const auto start = Clock::now();
    if (revolve) {
      rwd::CheckpointOptions options;
      options.max_fingerprints = a.max_fingerprints;
      rwd::CheckpointedAdjoint driver(stepper, objective, options);
      auto r = driver.run(y0, theta, rwd::revolve_schedule(a.snapshots));
      wall = since(start);
      cpu = thread_cpu_seconds() - cpu0;
      drift = r.drift;
      have_drift = true;
      result = std::move(r);
    } else {
      rwd::StoreAllAdjoint driver(stepper, objective);
      result = driver.run(y0, theta);
      wall = since(start);
      cpu = thread_cpu_seconds() - cpu0;
      // the driver (and its L stored states) is destroyed here, before the second forward run
    }
  }
  const std::int64_t peak_rss = peak_rss_bytes();
  if (!B::all_finite(result.grad_theta) || !B::all_finite(result.grad_y0))
    throw std::runtime_error("non-finite gradient: shorten the horizon");

  calibrate(a.calibration_runs / 2);
  progress("forward-only run 2");
  const auto [fwd2, fwd2_cpu] = time_forward(problem, a, y0, theta);
  const double forward_only = 0.5 * (fwd1 + fwd2);
  const double forward_only_cpu = 0.5 * (fwd1_cpu + fwd2_cpu);
  const rwd::Summary& s = result.summary;

  // The prediction: the simulator's counts of the measured run × the calibrated times.
  rwd::CostModel model;
  model.step_time = cal.step_time();
  model.adjoint_cost_factor = std::max(0.0, cal.reverse_time() / cal.step_time() - 1.0);
  model.write_time = cal.io_time();
  model.read_time = revolve ? cal.io_time() : 0.0;
  const double predicted_seconds = rwd::predicted_time(cost, model);
  rwd::CostModel steps_only = model;  // the step and adjoint terms alone: what the timers see
  steps_only.write_time = steps_only.read_time = 0.0;
  const double predicted_timed_seconds = rwd::predicted_time(cost, steps_only);

  // Self-calibrated: the step and adjoint times of the measured run's own first sweep and
  // reverse sweep (Summary), snapshot I/O from the calibration. For revolve this predicts only
  // the recomputation (its count × a first-sweep step) and the I/O: a check of the counts.
  rwd::CostModel self = model;
  self.step_time = s.forward_seconds / static_cast<double>(revolve ? l - 1 : l);
  self.adjoint_cost_factor =
      std::max(0.0, s.reverse_seconds / static_cast<double>(l) / self.step_time - 1.0);
  const double predicted_self_seconds = rwd::predicted_time(cost, self);

  rwd::CostModel counts_only;  // step counts alone, in forward-only steps, free snapshot I/O
  counts_only.adjoint_cost_factor =
      std::max(0.0, cal.reverse_time() / (forward_only / static_cast<double>(l)) - 1.0);
  const double counts_ratio = rwd::predicted_time_ratio(cost, counts_only);
  const Index advances = revolve ? cost.advances : l;
  const Index replayed = revolve ? cost.recomputed_steps : 0;
  std::ostringstream json;
  json << "{" << str("variant") << ":" << str(a.variant)                               //
       << "," << str("schedule") << ":" << str(s.schedule)                             //
       << "," << str("snapshots") << ":" << (revolve ? a.snapshots : 0)                //
       << "," << str("steps") << ":" << l                                              //
       << "," << str("grid") << ":" << a.grid                                          //
       << "," << str("unknowns") << ":" << problem.state_size()                        //
       << "," << str("dt") << ":" << num(a.dt)                                         //
       << "," << str("max_fingerprints") << ":" << (revolve ? a.max_fingerprints : 0)  //
       << "," << str("wall_seconds") << ":" << num(wall)                               //
       << "," << str("cpu_seconds") << ":" << num(cpu)                                 //
       << "," << str("forward_seconds") << ":" << num(s.forward_seconds)               //
       << "," << str("recompute_seconds") << ":" << num(s.recompute_seconds)           //
       << "," << str("reverse_seconds") << ":" << num(s.reverse_seconds)               //
       << "," << str("forward_steps") << ":" << s.forward_steps                        //
       << "," << str("recomputed_steps") << ":" << s.recomputed_steps                  //
       << "," << str("advances") << ":" << advances                                    //
       << "," << str("replayed_steps") << ":" << replayed                              //
       << "," << str("stores") << ":" << s.stores                                      //
       << "," << str("restores") << ":" << s.restores                                  //
       << "," << str("peak_stored_bytes") << ":"
       << s.storage.peak_bytes_on(rwd::LevelKind::memory)               //
       << "," << str("peak_rss_bytes") << ":" << peak_rss               //
       << "," << str("rss_before_gradient_bytes") << ":" << rss_before  //
       << "," << str("loss") << ":" << num(result.loss)                 //
       << "," << str("grad_theta") << ":[";
  for (Index i = 0; i < B::size(result.grad_theta); ++i)
    json << (i ? "," : "") << num(result.grad_theta[static_cast<Eigen::Index>(i)]);
  json << "]," << str("grad_theta_hash") << ":" << str(fnv1a_hex(result.grad_theta))  //
       << "," << str("grad_y0_hash") << ":" << str(fnv1a_hex(result.grad_y0));
  if (have_drift)
    json << "," << str("drift_bitwise_identical") << ":"
         << (drift.bitwise_identical() ? "true" : "false") << "," << str("drift_checked") << ":"
         << drift.replayed_steps_checked;
  json << "," << str("forward_only_seconds") << ":" << num(forward_only)                   //
       << "," << str("forward_only_runs") << ":[" << num(fwd1) << "," << num(fwd2) << "]"  //
       << "," << str("measured_ratio") << ":" << num(wall / forward_only)                  //
       << "," << str("measured_ratio_cpu") << ":" << num(cpu / forward_only_cpu)           //
       << "," << str("predicted_seconds") << ":" << num(predicted_seconds)                 //
       << "," << str("predicted_ratio") << ":" << num(predicted_seconds / forward_only)    //
       << "," << str("prediction_error") << ":" << num(wall / predicted_seconds - 1.0)     //
       << "," << str("untimed_seconds") << ":" << num(wall - s.total_seconds())            //
       << "," << str("predicted_timed_seconds") << ":" << num(predicted_timed_seconds)     //
       << "," << str("prediction_error_timed") << ":"                                      //
       << num(s.total_seconds() / predicted_timed_seconds - 1.0)                           //
       << "," << str("predicted_self_seconds") << ":" << num(predicted_self_seconds)       //
       << "," << str("prediction_error_self") << ":" << num(wall / predicted_self_seconds - 1.0)
       << "," << str("predicted_ratio_counts_only") << ":" << num(counts_ratio)  //
       << "," << str("calibration") << ":{"                                      //
       << str("steps") << ":" << cal.steps << "," << str("runs") << ":" << cal.step_runs.size()
       << "," << str("start") << ":" << a.calibration_start                                    //
       << "," << str("drift_stride") << ":" << (revolve ? cal.stride : 0)                      //
       << "," << str("measured_drift_stride") << ":" << (revolve ? drift.sampling_stride : 0)  //
       << "," << str("step_time") << ":" << num(model.step_time)                               //
       << "," << str("adjoint_cost_factor") << ":" << num(model.adjoint_cost_factor)           //
       << "," << str("write_time") << ":" << num(model.write_time)                             //
       << "," << str("read_time") << ":" << num(model.read_time)                               //
       << "," << str("forward_only_step_time") << ":" << num(forward_only / static_cast<double>(l))
       << "," << str("step_time_runs") << ":" << list(cal.step_runs)        //
       << "," << str("reverse_time_runs") << ":" << list(cal.reverse_runs)  //
       << "," << str("io_time_runs") << ":" << list(cal.io_runs) << "}"     //
       << "," << str("schedule_cost") << ":{"                               //
       << str("advances") << ":" << cost.advances << "," << str("recomputed") << ":"
       << cost.recomputed_steps << "," << str("stores") << ":" << cost.stores << ","
       << str("restores") << ":" << cost.restores << "," << str("reverses") << ":" << cost.reverses
       << "," << str("peak_slots") << ":" << cost.peak_slots << "}"  //
       << "," << str("process_seconds") << ":" << num(since(process_start)) << "}";
  std::cout << json.str() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "checkpoint_memory_time: error: " << e.what() << "\n";
    return 1;
  }
}
