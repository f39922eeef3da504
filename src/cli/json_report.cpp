// src/cli/json_report.cpp — see json_report.hpp.
#include "json_report.hpp"

#include <cmath>
#include <cstdint>

#ifndef REWIND_VERSION
#define REWIND_VERSION "unknown"
#endif

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

// nlohmann writes NaN/Inf as null anyway; being explicit keeps that a decision, not an accident.
Json number(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}

Json stats_json(const Summary& s) {
  Json j;
  j["method"] = s.method;
  j["schedule"] = s.schedule;
  j["backend"] = s.backend;
  j["state_size"] = s.state_size;
  j["parameter_size"] = s.parameter_size;
  j["steps"] = s.steps;
  j["rejected_steps"] = s.rejected_steps;
  j["forward_steps"] = s.forward_steps;
  j["recomputed_steps"] = s.recomputed_steps;
  j["reversed_steps"] = s.reversed_steps;
  j["rhs_evaluations_forward"] = s.rhs_evaluations_forward;
  j["rhs_evaluations_reverse"] = s.rhs_evaluations_reverse;
  j["vjp_evaluations"] = s.vjp_evaluations;
  j["stores"] = s.stores;
  j["restores"] = s.restores;
  j["peak_stored_bytes"] = s.storage.peak_memory_bytes;
  j["forward_seconds"] = number(s.forward_seconds);
  j["recompute_seconds"] = number(s.recompute_seconds);
  j["reverse_seconds"] = number(s.reverse_seconds);
  j["total_seconds"] = number(s.total_seconds());
  j["gradient_cost_ratio"] = number(s.gradient_cost_ratio());
  j["t_final"] = number(s.t_final);
  j["snapshot_file"] = s.storage.file.empty() ? Json(nullptr) : Json(s.storage.file);
  j["disk_asynchronous"] = s.storage.asynchronous;
  j["disk_stores"] = s.storage.disk_stores;
  j["disk_restores"] = s.storage.disk_restores;
  j["prefetch_hits"] = s.storage.io.prefetch_hits;
  j["peak_disk_bytes"] = s.storage.peak_disk_bytes;
  j["disk_bytes_written"] = s.storage.io.bytes_written;
  j["disk_bytes_read"] = s.storage.io.bytes_read;
  j["staging_bytes"] = s.storage.io.staging_bytes;
  j["disk_write_seconds"] = number(s.storage.io.write_seconds);
  j["disk_read_seconds"] = number(s.storage.io.read_seconds);
  j["disk_wait_seconds"] = number(s.storage.io.wait_seconds);
  j["disk_hidden_seconds"] = number(s.disk_hidden_seconds());
  j["relative_sensitivity"] = number(s.health.sensitivity);
  j["final_step_change"] = number(s.health.final_step_change);
  j["gradient_zero"] = s.health.gradient_zero;
  j["gradient_negligible"] = s.health.gradient_negligible;
  j["state_stationary"] = s.health.state_stationary;
  return j;
}

// An integer count of bytes when it fits exactly in a double's integers, else the double.
Json bytes(double b) {
  if (std::isfinite(b) && b >= 0.0 && b < 9007199254740992.0)
    return Json(static_cast<std::int64_t>(b));
  return number(b);
}

Json drift_json(const CheckpointReport& cp) {
  const DriftReport& d = cp.drift;
  return {{"max_rel_drift", number(d.max_rel_drift)},
          {"first_drift_step", d.first_drift_step >= 0 ? Json(d.first_drift_step) : Json(nullptr)},
          {"replayed_steps_checked", d.replayed_steps_checked},
          {"mismatched_steps", d.mismatched_steps},
          {"sampling_stride", d.sampling_stride},
          {"bitwise_identical", d.bitwise_identical()},
          {"policy", drift_policy_name(cp.drift_policy)}};
}

Json schedule_json(const RunReport& r) {
  const CheckpointReport& cp = r.checkpoint;
  const CheckpointPlan& p = cp.plan;
  const Summary& s = r.summary;
  Json j;
  j["name"] = p.name;
  j["kind"] = schedule_kind_name(p.kind);
  j["snapshots"] = p.snapshots;
  j["interval"] = p.kind == ScheduleKind::uniform ? Json(p.interval) : Json(nullptr);
  j["memory_budget_bytes"] = cp.memory_budget ? Json(*cp.memory_budget) : Json(nullptr);
  j["snapshot_bytes"] = cp.snapshot_bytes;
  // Griewank-Walther counting, as `rewind plan` and Summary: p = the schedule's advances, and
  // l + p with the forward step each reverse step re-runs.
  j["forward_steps"] = s.forward_steps;
  j["recomputed_steps"] = s.recomputed_steps;
  j["counting_steps"] = cp.counting_steps;
  j["stores"] = s.stores;
  j["restores"] = s.restores;
  j["peak_stored_bytes"] = s.storage.peak_memory_bytes;
  j["store_all_bytes"] = bytes(cp.store_all_bytes);
  j["memory_snapshots"] = p.kind == ScheduleKind::two_level ? Json(p.memory_snapshots) : Json(nullptr);
  j["disk_snapshots"] = p.kind == ScheduleKind::two_level ? Json(p.disk_snapshots) : Json(nullptr);
  j["all_on_disk"] = p.all_on_disk;
  j["disk_write_cost_steps"] = p.uses_disk() ? number(p.costs.disk_write_time) : Json(nullptr);
  j["disk_read_cost_steps"] = p.uses_disk() ? number(p.costs.disk_read_time) : Json(nullptr);
  j["predicted_disk_stores"] = p.disk_stores ? Json(*p.disk_stores) : Json(nullptr);
  j["predicted_disk_restores"] = p.disk_restores ? Json(*p.disk_restores) : Json(nullptr);
  j["measured_step_seconds"] = cp.disk_costs_measured ? number(cp.step_seconds) : Json(nullptr);
  j["measured_disk_write_seconds"] = cp.disk_costs_measured ? number(cp.disk_costs.write_seconds) : Json(nullptr);
  j["measured_disk_read_seconds"] = cp.disk_costs_measured ? number(cp.disk_costs.read_seconds) : Json(nullptr);
  j["predicted_forward_steps"] = p.forward_steps();
  j["predicted_recompute_ratio"] = number(p.recompute_ratio());
  j["predicted_time_ratio"] = number(p.predicted_time_ratio(cp.adjoint_cost));
  j["adjoint_cost"] = number(cp.adjoint_cost);
  return j;
}

}  // namespace

nlohmann::ordered_json run_report_json(const RunReport& r) {
  const RunSettings& s = r.settings;
  const bool adaptive = s.control.is_adaptive();
  Json j;
  j["rewind_version"] = REWIND_VERSION;
  j["problem"] = s.problem->name;
  j["n"] = s.problem->sized() ? Json(s.n) : Json(nullptr);
  j["method"] = s.bdf ? std::string("bdf") : s.tableau.name;
  j["adaptive"] = adaptive;
  // Fixed: the step; adaptive: the first step tried (0 = chosen automatically).
  j["dt"] = number(s.control.dt);
  j["t_final"] = number(r.summary.t_final);
  j["rtol"] = adaptive ? number(s.control.rtol) : s.bdf ? number(s.bdf_options.rtol) : Json(nullptr);
  j["atol"] = adaptive ? number(s.control.atol) : s.bdf ? number(s.bdf_options.atol.front()) : Json(nullptr);
  j["state_size"] = r.state_size;
  j["parameter_size"] = r.parameter_size;
  j["steps"] = r.summary.steps;
  j["loss"] = number(r.loss);
  j["grad_y0_norm"] = number(r.grad_y0_norm);
  j["grad_theta_norm"] = number(r.grad_theta_norm);
  Json grad = Json::array();
  for (double g : r.grad_theta) grad.push_back(number(g));
  j["grad_theta"] = std::move(grad);
  j["parameter_names"] = r.parameter_names;
  // One line when the gradient is zero or negligible or the state stopped changing; else null.
  j["degenerate"] =
      r.summary.health.degenerate() ? Json(r.summary.health.describe()) : Json(nullptr);
  const FiniteDifferenceCheck& fd = r.fd;
  if (!r.fd_checked) {
    j["fd_check"] = nullptr;
  } else {
    j["fd_check"] = {{"seed", fd.seed},
                     {"epsilon", number(fd.epsilon)},
                     {"first_epsilon", number(fd.first_epsilon)},
                     {"epsilon_rule", fd.epsilon_rule},
                     {"loss_evaluations", fd.loss_evaluations},
                     {"steps_frozen", fd.steps_frozen},
                     {"directional_fd", number(fd.directional_fd)},
                     {"fd_error_estimate", number(fd.fd_error_estimate)},
                     {"directional_adjoint", number(fd.directional_adjoint)},
                     {"resolution", number(fd.resolution)},
                     {"rel_error", number(fd.rel_error)},
                     {"agreement", number(fd.agreement)},
                     {"verdict", fd.verdict}};
  }
  j["stats"] = stats_json(r.summary);
  j["schedule"] = r.checkpointed ? schedule_json(r) : Json(nullptr);
  j["drift"] = r.checkpointed ? drift_json(r.checkpoint) : Json(nullptr);
  return j;
}

}  // namespace rwd::cli
