// src/cli/run_report.hpp — the outcome of `rewind run`, printed as text (text_report.hpp) or
// JSON (json_report.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/snapshot_level_probe.hpp"
#include "rewind/types.hpp"
#include "run_settings.hpp"
#include "schedule_plan.hpp"

namespace rwd::cli {

// Finite differences of J along a unit direction d of y0, against the adjoint's ⟨dJ/dy0, d⟩.
// Central differences (J(y0 + εd) − J(y0 − εd)) / 2ε for ε = first_epsilon, first_epsilon/2, …,
// extrapolated to ε → 0 (extrapolated_difference.hpp).
struct FiniteDifferenceCheck {
  std::uint64_t seed = 0;            // seed of d (rwd::detail::hash_uniform, platform-independent)
  double first_epsilon = 0.0;        // the largest ε of the sweep
  double epsilon = 0.0;              // the smallest ε that entered the accepted estimate
  std::string epsilon_rule;          // how first_epsilon was chosen
  int loss_evaluations = 0;          // forward runs spent on the check
  bool steps_frozen = false;         // adaptive: the differences rerun the accepted steps
  double directional_fd = 0.0;       // the extrapolated difference quotient
  double fd_error_estimate = 0.0;    // its estimated absolute error (at least `resolution`)
  double directional_adjoint = 0.0;  // ⟨dJ/dy0, d⟩
  // The smallest derivative the differences resolve: machine ε · |J| / epsilon.
  double resolution = 0.0;
  double rel_error = 0.0;  // |fd − adjoint| / max(|fd|, |adjoint|, resolution)
  double agreement =
      1e-6;  // rel_error up to this is "agree" (BDF: 10⁴ · rtol, a continuous adjoint's accuracy)
  std::string verdict;  // "agree", "disagree" or "inconclusive" (fd_verdict)
};

// What a checkpointed run (--snapshots, --memory, --schedule) planned and found.
struct CheckpointReport {
  CheckpointPlan plan;                        // the schedule and its predicted costs
  std::optional<std::int64_t> memory_budget;  // --memory in bytes
  Index snapshot_bytes = 0;                   // one snapshot: state + carry (kCarryBytes)
  double store_all_bytes = 0.0;               // (l + 1) snapshots: every state y_0 … y_l
  double adjoint_cost = kDefaultAdjointCost;  // F of the time prediction
  DriftPolicy drift_policy = DriftPolicy::warn;
  DriftReport drift;         // replays against the first sweep
  Index counting_steps = 0;  // adaptive: the counting sweep (0 for fixed)
  // --resume: the action a killed run was continued from (−1: started afresh), the disk
  // snapshots found intact, and the steps recomputed to rebuild the rest.
  Index resumed_at_action = -1;
  Index adopted_snapshots = 0;
  Index resume_replayed_steps = 0;
  bool disk_costs_measured = false;   // two-level: step and disk times measured first
  double step_seconds = 0.0;          // one forward step, measured
  DiskCosts disk_costs;               // one snapshot write / read, measured
  bool level_costs_measured = false;  // three-level: device and host copies measured first
  LevelCosts level_costs;             // one snapshot copy on the device / host level
  // --resume: the costs above were measured by the attempt that left the snapshot file (a
  // resumed attempt plans with them, so that it continues the same schedule).
  bool costs_from_earlier_attempt = false;
};

// --backend cuda: the device, and the device memory the run used — the largest (in use − in
// use before the problem was built), from cudaMemGetInfo sampled every few steps of both sweeps
// (so it includes the state, the stages, the adjoint vectors and snapshots held on the device).
struct DeviceReport {
  std::string name;
  std::int64_t total_bytes = 0;
  std::int64_t used_bytes = 0;
  int samples = 0;  // how many times device memory was read
};

struct RunReport {
  RunSettings settings;
  Index state_size = 0;
  Index parameter_size = 0;
  double loss = 0.0;                         // J = ½|y_N|²
  double grad_y0_norm = 0.0;                 // |dJ/dy0|₂
  std::vector<double> grad_y0;               // dJ/dy0 (this rank's part of a split state)
  std::vector<double> final_state;           // y_N (this rank's part; not in the reports)
  double grad_theta_norm = 0.0;              // |dJ/dθ|₂
  std::vector<double> parameters;            // θ of the run (defaults and --parameters)
  std::vector<double> grad_theta;            // dJ/dθ
  std::vector<std::string> parameter_names;  // one per θ entry
  bool fd_checked = false;                   // false with --no-fd-check: `fd` is empty
  FiniteDifferenceCheck fd;
  Summary summary;
  bool checkpointed = false;  // false: store-all driver, `checkpoint` is empty
  CheckpointReport checkpoint;
  std::optional<DeviceReport> device;  // --backend cuda only
};

}  // namespace rwd::cli
