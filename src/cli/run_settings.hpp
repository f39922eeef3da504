// src/cli/run_settings.hpp — what `rewind run` was asked to do, checked and completed.
//
//   rwd::cli::RunOptions options;            // as typed: unset fields take the problem's default
//   options.problem = "lorenz96";
//   options.dt = 0.01;
//   rwd::cli::RunSettings s = rwd::cli::resolve_run_settings(options);   // or InvalidArgument
//
// resolve_run_settings refuses bad input before any work, naming the command-line flag and the
// rule ("--dt = -1 must be a finite step size > 0"), fills in the per-problem defaults of
// problem_registry.hpp and builds the tableau and the step control.
//
// Checkpointing: --snapshots C, --memory BYTES or --schedule K select the checkpointed driver
// (rwd::CheckpointedAdjoint) with the schedule of schedule_plan.hpp; without them the run uses
// the store-all driver (rwd::StoreAllAdjoint), as it always has. A budget in bytes becomes a
// snapshot count only when the state size is known (gradient_run.hpp).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "byte_size.hpp"
#include "problem_registry.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/types.hpp"
#include "schedule_plan.hpp"

namespace rwd::cli {

// The options of `rewind run` as given; std::nullopt = not given on the command line.
struct RunOptions {
  std::string problem;
  std::optional<Index> n;      // problem size (see ProblemInfo::size_meaning)
  std::optional<Index> steps;  // fixed steps; with --adaptive only sets the default t_final
  std::optional<double> dt;    // fixed: the step; adaptive: the first step tried
  std::string method;  // empty: the problem's default (rk4, or bdf for stiff problems)
  bool adaptive = false;
  std::optional<double> t_final;     // adaptive only
  std::optional<double> rtol;        // adaptive only
  std::optional<double> atol;        // adaptive only
  std::string linear_solver;         // bdf: dense | band | gmres; empty: band if the problem has one
  std::uint64_t seed = 1;            // direction of the finite-difference spot check
  std::optional<double> fd_epsilon;  // first (largest) spot-check step; default: default_fd_step
  bool fd_check = true;              // false: skip the spot check (--no-fd-check)
  bool json = false;

  // Checkpointing; any of the first three selects the checkpointed driver.
  std::optional<Index> snapshots;         // --snapshots C
  std::optional<std::string> memory;      // --memory BYTES, as typed ("256MiB")
  std::optional<std::string> schedule;    // --schedule revolve | uniform | store-all
  std::optional<Index> interval;          // --interval K (uniform)
  std::optional<std::string> drift;       // --drift ignore | warn | fail
  std::optional<double> adjoint_cost;     // --adjoint-cost F (predictions only)
  bool progress = false;                  // progress bar on stderr (set when it is a terminal)

  // Disk level: --disk DIR puts snapshots in an HDF5 file there — all of them with --snapshots,
  // or the disk level of the two-level schedule (--ram-snapshots K --disk-snapshots D).
  std::optional<std::string> disk;        // --disk DIR
  std::optional<Index> ram_snapshots;     // --ram-snapshots K
  std::optional<Index> disk_snapshots;    // --disk-snapshots D
  bool sync_io = false;                   // --sync-io: disk I/O inline, not in the background
  bool keep_snapshots = false;            // --keep-snapshots: leave the file for rewind inspect
  std::optional<int> compression;         // --compression 0..9
  std::optional<double> disk_write_cost;  // --disk-write-cost STEPS (default: measured)
  std::optional<double> disk_read_cost;   // --disk-read-cost STEPS (default: measured)
};

// Everything a run needs, with defaults filled in.
struct RunSettings {
  const ProblemInfo* problem = nullptr;
  Index n = 0;             // problem size (0 for fixed-size problems)
  ButcherTableau tableau;  // the method (Runge–Kutta)
  StepControl control;     // fixed (t0 = 0, dt, steps) or adaptive (0 → t_final, rtol, atol)
  // --method bdf: CVODES on macro-intervals; a "step" is one interval of length --dt, and
  // --steps intervals make the horizon (rwd::CvodesIntervalStepper).
  bool bdf = false;
  CvodesOptions bdf_options;
  bool linear_solver_given = false;  // --linear-solver; otherwise band when the problem has a band
  IntervalGrid grid;
  std::uint64_t seed = 1;
  std::optional<double> fd_epsilon;  // nullopt: chosen from y0 (default_fd_step)
  bool fd_check = true;
  bool json = false;

  bool checkpointed = false;                 // CheckpointedAdjoint; false: StoreAllAdjoint
  PlanRequest schedule;                  // kind, budget (--snapshots), interval
  std::optional<std::int64_t> memory_bytes;  // --memory: the budget in bytes
  DriftPolicy drift = DriftPolicy::warn;
  double adjoint_cost = kDefaultAdjointCost;
  bool progress = false;

  // Disk level (see RunOptions); disk_directory empty: every snapshot in memory.
  std::string disk_directory;
  bool sync_io = false;
  bool keep_snapshots = false;
  int compression = 0;
  std::optional<double> disk_write_cost;  // in forward steps; nullopt: measured before the run
  std::optional<double> disk_read_cost;
};

inline const char* drift_policy_name(DriftPolicy policy) {
  switch (policy) {
    case DriftPolicy::ignore:
      return "ignore";
    case DriftPolicy::warn:
      return "warn";
    case DriftPolicy::fail:
      return "fail";
  }
  return "?";
}

inline DriftPolicy parse_drift_policy(std::string_view text) {
  std::string key(text);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "ignore") return DriftPolicy::ignore;
  if (key == "warn") return DriftPolicy::warn;
  if (key == "fail") return DriftPolicy::fail;
  rwd::detail::fail<InvalidArgument>("--drift = '", text,
                                     "' is not a policy; choose ignore, warn or fail");
}

// Adaptive tolerances when not given (StepControl's defaults).
inline constexpr double kDefaultRtol = 1e-6;
inline constexpr double kDefaultAtol = 1e-9;

namespace detail {
// The shortest text that reads back as value: 1e-20, not 9.9999999999999995e-21.
inline std::string shortest(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}
[[noreturn]] inline void refuse(const char* flag, double value, const char* rule) {
  rwd::detail::fail<InvalidArgument>(flag, " = ", shortest(value), " ", rule);
}
inline void require_positive_finite(const char* flag, double value, const char* rule) {
  if (!(value > 0.0) || !std::isfinite(value)) refuse(flag, value, rule);
}
}  // namespace detail

inline RunSettings resolve_run_settings(const RunOptions& o) {
  RunSettings s;
  s.problem = &require_problem(o.problem);
  const ProblemInfo& p = *s.problem;

  if (p.sized()) {
    s.n = o.n.value_or(p.default_n);
  } else if (o.n) {
    rwd::detail::fail<InvalidArgument>("--n does not apply to ", p.name,
                                       ", whose state size is fixed at ", p.fixed_state_size);
  }

  const Index steps = o.steps.value_or(p.default_steps);
  if (steps < 1) rwd::detail::fail<InvalidArgument>("--steps = ", steps, " must be >= 1");
  if (o.dt) detail::require_positive_finite("--dt", *o.dt, "must be a finite step size > 0");
  const double dt = o.dt.value_or(p.default_dt);

  const std::string method = o.method.empty() ? (p.stiff ? "bdf" : "rk4") : o.method;
  s.bdf = method == "bdf";
  if (s.bdf) {
    if (o.adaptive)
      rwd::detail::fail<InvalidArgument>("--method bdf chooses its own steps; --adaptive is for Runge-Kutta methods");
    if (o.t_final)
      rwd::detail::fail<InvalidArgument>("--method bdf: the horizon is --steps intervals of --dt; drop --t-final");
    const double rtol = o.rtol.value_or(kDefaultRtol);
    const double atol = o.atol.value_or(kDefaultAtol);
    detail::require_positive_finite("--rtol", rtol, "must be finite and > 0");
    if (rtol < 1e-15) detail::refuse("--rtol", rtol, "is below double-precision round-off; use >= 1e-15");
    detail::require_positive_finite("--atol", atol, "must be finite and > 0");
    s.bdf_options.rtol = s.bdf_options.rtol_adjoint = rtol;
    s.bdf_options.atol = {atol};
    s.bdf_options.atol_adjoint = s.bdf_options.atol_quadrature = atol;
    s.grid = IntervalGrid{0.0, static_cast<double>(steps) * dt, steps};
    if (!o.linear_solver.empty()) {
      s.linear_solver_given = true;
      if (o.linear_solver == "dense") s.bdf_options.linear_solver = CvodesLinearSolver::dense;
      else if (o.linear_solver == "band") s.bdf_options.linear_solver = CvodesLinearSolver::band;
      else if (o.linear_solver == "gmres") s.bdf_options.linear_solver = CvodesLinearSolver::gmres;
      else
        rwd::detail::fail<InvalidArgument>("--linear-solver '", o.linear_solver, "' is not known (dense, band, gmres)");
    }
    s.tableau = ButcherTableau::rk4();  // unused: reports name the method from the stepper
    s.control = StepControl::fixed(0.0, dt, steps);
  } else {
  if (!o.linear_solver.empty())
    rwd::detail::fail<InvalidArgument>("--linear-solver applies to --method bdf (Runge-Kutta solves no linear systems)");
  try {
    s.tableau = ButcherTableau::by_name(method);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("--method: ") + e.what() + " (or bdf: CVODES on intervals)");
  }

  if (o.adaptive) {
    if (!s.tableau.has_embedded())
      rwd::detail::fail<InvalidArgument>(
          "--method ", method,
          " has no embedded error estimate, so it cannot take --adaptive steps; use heun, bs3, "
          "dopri5 or tsit5");
    const double t_final = o.t_final.value_or(static_cast<double>(steps) * dt);
    detail::require_positive_finite("--t-final", t_final, "must be a finite end time > 0");
    const double rtol = o.rtol.value_or(kDefaultRtol);
    const double atol = o.atol.value_or(kDefaultAtol);
    detail::require_positive_finite("--rtol", rtol, "must be finite and > 0");
    if (rtol < 1e-15)
      detail::refuse("--rtol", rtol, "is below double-precision round-off; use >= 1e-15");
    detail::require_positive_finite("--atol", atol, "must be finite and > 0");
    // An explicit --dt is the first step tried; otherwise the stepper chooses it.
    s.control = StepControl::adaptive(0.0, t_final, rtol, atol, o.dt.value_or(0.0));
  } else {
    if (o.t_final || o.rtol || o.atol)
      rwd::detail::fail<InvalidArgument>(
          o.t_final ? "--t-final"
          : o.rtol  ? "--rtol"
                    : "--atol",
          " applies only with --adaptive; fixed steps end at steps * dt");
    s.control = StepControl::fixed(0.0, dt, steps);
  }
  }
  s.control.validate();

  if (o.fd_epsilon)
    detail::require_positive_finite("--fd-epsilon", *o.fd_epsilon, "must be finite and > 0");
  if (o.fd_epsilon && !o.fd_check)
    rwd::detail::fail<InvalidArgument>("--fd-epsilon and --no-fd-check exclude each other");
  s.fd_check = o.fd_check;
  s.fd_epsilon = o.fd_epsilon;
  s.seed = o.seed;
  s.json = o.json;
  s.progress = o.progress;

  const bool two_level = o.ram_snapshots || o.disk_snapshots;
  s.checkpointed = o.snapshots || o.memory || o.schedule || two_level || o.disk;
  const bool disk_tuning = o.sync_io || o.keep_snapshots || o.compression;
  if (!o.disk && (disk_tuning || two_level))
    rwd::detail::fail<InvalidArgument>(
        two_level ? "--ram-snapshots/--disk-snapshots" : o.sync_io ? "--sync-io"
        : o.keep_snapshots                                         ? "--keep-snapshots"
                                                                   : "--compression",
        " needs --disk DIR (where the snapshot file goes)");
  if (o.disk && !two_level && !o.snapshots && !o.memory)
    rwd::detail::fail<InvalidArgument>(
        "--disk needs a budget: --ram-snapshots K --disk-snapshots D (two-level), or --snapshots C "
        "(every snapshot on disk)");
  if ((o.disk_write_cost || o.disk_read_cost) && !two_level)
    rwd::detail::fail<InvalidArgument>(
        "--disk-write-cost/--disk-read-cost weigh the two-level schedule: add --ram-snapshots K "
        "--disk-snapshots D");
  if (!s.checkpointed && (o.interval || o.drift || o.adjoint_cost))
    rwd::detail::fail<InvalidArgument>(o.interval ? "--interval"
                                       : o.drift  ? "--drift"
                                                  : "--adjoint-cost",
                                       " applies only to checkpointed runs: add --snapshots C, "
                                       "--memory BYTES or --schedule");
  if (o.snapshots && o.memory)
    rwd::detail::fail<InvalidArgument>(
        "--snapshots and --memory exclude each other: give the budget one way");
  if (o.snapshots && *o.snapshots < 1)
    rwd::detail::fail<InvalidArgument>("--snapshots = ", *o.snapshots, " must be >= 1");
  if (o.memory) s.memory_bytes = parse_byte_size("--memory", *o.memory);
  if (o.schedule) s.schedule.kind = parse_schedule_kind(*o.schedule);
  if (two_level) {
    if (o.schedule && s.schedule.kind != ScheduleKind::two_level)
      rwd::detail::fail<InvalidArgument>("--ram-snapshots/--disk-snapshots select the two-level "
                                         "schedule, not --schedule ", *o.schedule);
    s.schedule.kind = ScheduleKind::two_level;
    s.schedule.memory_slots = o.ram_snapshots;
    s.schedule.disk_slots = o.disk_snapshots;
  }
  if (o.disk) {
    if (o.disk->empty()) rwd::detail::fail<InvalidArgument>("--disk needs a directory");
    std::error_code error;
    const auto status = std::filesystem::status(*o.disk, error);
    if (!std::filesystem::exists(status))
      rwd::detail::fail<InvalidArgument>("--disk '", *o.disk, "': the snapshot directory does not exist");
    if (!std::filesystem::is_directory(status))
      rwd::detail::fail<InvalidArgument>("--disk '", *o.disk, "' is not a directory");
    s.disk_directory = *o.disk;
    s.schedule.all_on_disk = !two_level;
    s.sync_io = o.sync_io;
    s.keep_snapshots = o.keep_snapshots;
    if (o.compression && (*o.compression < 0 || *o.compression > 9))
      rwd::detail::fail<InvalidArgument>("--compression = ", *o.compression, " must lie in [0, 9]");
    s.compression = o.compression.value_or(0);
    for (const auto& [flag, value] : {std::pair{"--disk-write-cost", o.disk_write_cost},
                                      std::pair{"--disk-read-cost", o.disk_read_cost}})
      if (value && (!std::isfinite(*value) || *value < 0.0))
        detail::refuse(flag, *value, "must be finite and >= 0 (forward steps per snapshot)");
    s.disk_write_cost = o.disk_write_cost;
    s.disk_read_cost = o.disk_read_cost;
    // Placeholders until measured (gradient_run.hpp); validate() needs finite values.
    s.schedule.costs.disk_write_time = o.disk_write_cost.value_or(0.0);
    s.schedule.costs.disk_read_time = o.disk_read_cost.value_or(0.0);
  }
  s.schedule.budget = o.snapshots;
  s.schedule.interval = o.interval;
  if (s.checkpointed) validate_schedule_flags(s.schedule, s.memory_bytes.has_value());
  if (o.drift) s.drift = parse_drift_policy(*o.drift);
  if (o.adjoint_cost) {
    if (!std::isfinite(*o.adjoint_cost) || *o.adjoint_cost < 0.0)
      detail::refuse("--adjoint-cost", *o.adjoint_cost, "must be finite and >= 0");
    s.adjoint_cost = *o.adjoint_cost;
  }
  return s;
}

}  // namespace rwd::cli
