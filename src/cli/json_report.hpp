// src/cli/json_report.hpp — `rewind run`'s report as one JSON object, for scripts.
//
//   rewind run lorenz96 --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["loss"])'
//
// Keys: "rewind_version", "problem", "n" (null for fixed-size problems), "method", "adaptive",
// "dt", "t_final", "rtol"/"atol" (null for fixed steps), "state_size", "parameter_size", "steps",
// "loss", "grad_y0_norm", "grad_theta_norm", "grad_theta", "parameter_names", "degenerate" (one
// line when the gradient is zero or negligible or the state stopped changing before the end,
// rwd::GradientHealth::describe(); null otherwise),
// "fd_check" {"seed", "epsilon" (smallest step used), "first_epsilon", "epsilon_rule",
// "loss_evaluations", "steps_frozen", "directional_fd", "fd_error_estimate",
// "directional_adjoint", "resolution", "rel_error", "agreement" (the bound of "agree":
// 1e-6, or 1e4·rtol for --method bdf), "verdict"} (see FiniteDifferenceCheck in
// run_report.hpp; null with --no-fd-check), "stats" (every Summary field, plus total_seconds and
// gradient_cost_ratio; the health as "relative_sensitivity", "final_step_change",
// "gradient_zero", "gradient_negligible", "state_stationary"), and for checkpointed runs
// (--snapshots, --memory, --schedule; null otherwise):
//   "schedule" {"name", "kind", "snapshots", "interval", "memory_budget_bytes",
//     "snapshot_bytes" (state + carry), "forward_steps" (l + p), "recomputed_steps" (p, every
//     step the schedule advances, the first sweep's l − 1 included; the conventions of
//     `rewind plan` and of rwd::Summary), "counting_steps" (adaptive), "resumed" (null, or
//     {"at_action", "intact_disk_snapshots", "rebuild_steps"} for a run continued by --resume),
//     "stores", "restores",
//     "peak_stored_bytes", "store_all_bytes" ((l + 1) states), "predicted_forward_steps",
//     "predicted_recompute_ratio", "predicted_time_ratio", "adjoint_cost"},
//   "drift" {"max_rel_drift", "first_drift_step" (null if none), "replayed_steps_checked",
//     "mismatched_steps", "sampling_stride", "bitwise_identical", "policy"}.
// Numbers are written as the shortest text that reads back as the same double (nlohmann's
// dump), so equal doubles print equal and scripts can compare runs bit for bit; a non-finite
// number is written as null.
#pragma once

#include <nlohmann/json.hpp>

#include "run_report.hpp"

namespace rwd::cli {

nlohmann::ordered_json run_report_json(const RunReport& report);

}  // namespace rwd::cli
