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

Json stats_json(const Summary& summary) {
  Json j;
  j["method"] = summary.method;
  j["schedule"] = summary.schedule;
  j["backend"] = summary.backend;
  j["threads"] = summary.threads;
  j["ranks"] = summary.ranks;
  j["state_size"] = summary.state_size;
  j["parameter_size"] = summary.parameter_size;
  j["steps"] = summary.steps;
  j["rejected_steps"] = summary.rejected_steps;
  j["forward_steps"] = summary.forward_steps;
  j["recomputed_steps"] = summary.recomputed_steps;
  j["reversed_steps"] = summary.reversed_steps;
  j["rhs_evaluations_forward"] = summary.rhs_evaluations_forward;
  j["rhs_evaluations_reverse"] = summary.rhs_evaluations_reverse;
  j["vjp_evaluations"] = summary.vjp_evaluations;
  j["stores"] = summary.stores;
  j["restores"] = summary.restores;
  j["peak_stored_bytes"] = summary.storage.peak_bytes_on(LevelKind::memory);
  j["setup_seconds"] = number(summary.setup_seconds);
  j["forward_seconds"] = number(summary.forward_seconds);
  j["recompute_seconds"] = number(summary.recompute_seconds);
  j["reverse_seconds"] = number(summary.reverse_seconds);
  j["total_seconds"] = number(summary.total_seconds());
  j["gradient_cost_ratio"] = number(summary.gradient_cost_ratio());
  j["t_final"] = number(summary.t_final);
  j["snapshot_file"] = summary.storage.file.empty() ? Json(nullptr) : Json(summary.storage.file);
  j["disk_asynchronous"] = summary.storage.asynchronous;
  j["disk_stores"] = summary.storage.stores_on(LevelKind::disk);
  j["disk_restores"] = summary.storage.restores_on(LevelKind::disk);
  j["prefetch_hits"] = summary.storage.io.prefetch_hits;
  j["peak_disk_bytes"] = summary.storage.peak_bytes_on(LevelKind::disk);
  j["disk_bytes_written"] = summary.storage.io.bytes_written;
  j["disk_bytes_read"] = summary.storage.io.bytes_read;
  j["progress_records"] = summary.storage.io.progress_writes;  // --resume (in disk_bytes_written)
  j["staging_bytes"] = summary.storage.io.staging_bytes;
  j["disk_write_seconds"] = number(summary.storage.io.write_seconds);
  j["disk_read_seconds"] = number(summary.storage.io.read_seconds);
  j["disk_wait_seconds"] = number(summary.storage.io.wait_seconds);
  j["disk_hidden_seconds"] = number(summary.disk_hidden_seconds());
  j["relative_sensitivity"] = number(summary.health.sensitivity);
  j["final_step_change"] = number(summary.health.final_step_change);
  j["gradient_zero"] = summary.health.gradient_zero;
  j["gradient_negligible"] = summary.health.gradient_negligible;
  j["state_stationary"] = summary.health.state_stationary;
  return j;
}

// An integer count of bytes when it fits exactly in a double's integers, else the double.
Json bytes(double b) {
  if (std::isfinite(b) && b >= 0.0 && b < 9007199254740992.0)
    return Json(static_cast<std::int64_t>(b));
  return number(b);
}

Json drift_json(const CheckpointReport& checkpointing) {
  const DriftReport& drift = checkpointing.drift;
  return {{"max_rel_drift", number(drift.max_rel_drift)},
          {"first_drift_step",
           drift.first_drift_step >= 0 ? Json(drift.first_drift_step) : Json(nullptr)},
          {"replayed_steps_checked", drift.replayed_steps_checked},
          {"mismatched_steps", drift.mismatched_steps},
          {"sampling_stride", drift.sampling_stride},
          {"bitwise_identical", drift.bitwise_identical()},
          {"policy", drift_policy_name(checkpointing.drift_policy)}};
}

Json schedule_json(const RunReport& report) {
  const CheckpointReport& checkpointing = report.checkpoint;
  const CheckpointPlan& plan = checkpointing.plan;
  const Summary& summary = report.summary;
  Json j;
  j["name"] = plan.name;
  // The family's own values (ScheduleFamily::facts), null where it has none.
  const auto fact = [&](const char* key) {
    const std::optional<Index> value = plan_fact(plan, key);
    return value ? Json(*value) : Json(nullptr);
  };
  j["kind"] = plan.family->name();
  j["snapshots"] = plan.snapshots;
  j["interval"] = fact("interval");
  j["memory_budget_bytes"] =
      checkpointing.memory_budget ? Json(*checkpointing.memory_budget) : Json(nullptr);
  j["snapshot_bytes"] = checkpointing.snapshot_bytes;
  // Griewank-Walther counting, as `rewind plan` and Summary: p = the schedule's advances, and
  // l + p with the forward step each reverse step re-runs.
  j["forward_steps"] = summary.forward_steps;
  j["recomputed_steps"] = summary.recomputed_steps;
  j["counting_steps"] = checkpointing.counting_steps;
  // --resume: null when the run started afresh.
  j["resumed"] = checkpointing.resumed_at_action < 0
                     ? Json(nullptr)
                     : Json{{"at_action", checkpointing.resumed_at_action},
                            {"intact_disk_snapshots", checkpointing.adopted_snapshots},
                            {"rebuild_steps", checkpointing.resume_replayed_steps}};
  j["stores"] = summary.stores;
  j["restores"] = summary.restores;
  j["peak_stored_bytes"] = summary.storage.peak_bytes_on(LevelKind::memory);
  j["store_all_bytes"] = bytes(checkpointing.store_all_bytes);
  j["memory_snapshots"] = fact("memory_snapshots");
  j["disk_snapshots"] = fact("disk_snapshots");
  j["device_snapshots"] = fact("device_snapshots");
  j["host_snapshots"] = fact("host_snapshots");
  j["three_level_disk_snapshots"] = fact("three_level_disk_snapshots");
  // The host level's statistics when the plan has one (a three-level plan).
  const bool has_host = plan.level(LevelKind::host) != nullptr;
  const auto optional = [](std::optional<Index> count) {
    return count ? Json(*count) : Json(nullptr);
  };
  j["predicted_host_stores"] = optional(plan.stores_on(LevelKind::host));
  j["predicted_host_restores"] = optional(plan.restores_on(LevelKind::host));
  j["host_stores"] = has_host ? Json(summary.storage.stores_on(LevelKind::host)) : Json(nullptr);
  j["host_restores"] =
      has_host ? Json(summary.storage.restores_on(LevelKind::host)) : Json(nullptr);
  // Host restores whose copy the store had started ahead on its copy stream (CUDA; 0 where
  // host copies are synchronous).
  j["host_prefetches"] =
      has_host ? Json(summary.storage.prefetches_on(LevelKind::host)) : Json(nullptr);
  j["peak_host_bytes"] =
      has_host ? Json(summary.storage.peak_bytes_on(LevelKind::host)) : Json(nullptr);
  j["measured_device_write_seconds"] = checkpointing.level_costs_measured
                                           ? number(checkpointing.level_costs.device_write_seconds)
                                           : Json(nullptr);
  j["measured_device_read_seconds"] = checkpointing.level_costs_measured
                                          ? number(checkpointing.level_costs.device_read_seconds)
                                          : Json(nullptr);
  j["measured_host_write_seconds"] = checkpointing.level_costs_measured
                                         ? number(checkpointing.level_costs.host_write_seconds)
                                         : Json(nullptr);
  j["measured_host_read_seconds"] = checkpointing.level_costs_measured
                                        ? number(checkpointing.level_costs.host_read_seconds)
                                        : Json(nullptr);
  j["all_on_disk"] = plan.all_on_disk();
  j["disk_write_cost_steps"] =
      plan.uses_disk() ? number(plan.costs.disk_write_time) : Json(nullptr);
  j["disk_read_cost_steps"] = plan.uses_disk() ? number(plan.costs.disk_read_time) : Json(nullptr);
  j["predicted_disk_stores"] = optional(plan.stores_on(LevelKind::disk));
  j["predicted_disk_restores"] = optional(plan.restores_on(LevelKind::disk));
  j["measured_step_seconds"] =
      checkpointing.disk_costs_measured || checkpointing.level_costs_measured
          ? number(checkpointing.step_seconds)
          : Json(nullptr);
  j["measured_costs_from_earlier_attempt"] = checkpointing.costs_from_earlier_attempt;
  j["measured_disk_write_seconds"] = checkpointing.disk_costs_measured
                                         ? number(checkpointing.disk_costs.write_seconds)
                                         : Json(nullptr);
  j["measured_disk_read_seconds"] = checkpointing.disk_costs_measured
                                        ? number(checkpointing.disk_costs.read_seconds)
                                        : Json(nullptr);
  j["predicted_forward_steps"] = plan.forward_steps();
  j["predicted_recompute_ratio"] = number(plan.recompute_ratio());
  j["predicted_time_ratio"] = number(plan.predicted_time_ratio(checkpointing.adjoint_cost));
  j["adjoint_cost"] = number(checkpointing.adjoint_cost);
  return j;
}

}  // namespace

nlohmann::ordered_json run_report_json(const RunReport& report) {
  const RunSettings& settings = report.settings;
  const bool adaptive = settings.control.is_adaptive();
  Json j;
  j["rewind_version"] = REWIND_VERSION;
  j["problem"] = settings.problem->name;
  j["n"] = settings.problem->sized() ? Json(settings.n) : Json(nullptr);
  const auto* sde = std::get_if<StochasticMethod>(&settings.method);
  const auto* bdf = std::get_if<BdfMethod>(&settings.method);
  j["method"] = method_name(settings.method);
  // The key of the run's draws (problems with noise; null otherwise): the same seed gives the
  // same bits.
  j["noise_seed"] = sde ? Json(sde->noise_seed) : Json(nullptr);
  j["adaptive"] = adaptive;
  // Fixed: the step; adaptive: the first step tried (0 = chosen automatically).
  j["dt"] = number(settings.control.dt);
  j["t_final"] = number(report.summary.t_final);
  j["rtol"] = adaptive ? number(settings.control.rtol)
              : bdf    ? number(bdf->options.rtol)
                       : Json(nullptr);
  j["atol"] = adaptive ? number(settings.control.atol)
              : bdf    ? number(bdf->options.atol.front())
                       : Json(nullptr);
  // An implicit method's Newton tolerances (null for the others): the gradient is the exact
  // derivative of the computed map up to this residual.
  const auto* implicit = std::get_if<ImplicitRungeKuttaMethod>(&settings.method);
  j["newton_rtol"] = implicit ? number(implicit->newton.rtol) : Json(nullptr);
  j["newton_atol"] = implicit ? number(implicit->newton.atol) : Json(nullptr);
  j["state_size"] = report.state_size;
  j["parameter_size"] = report.parameter_size;
  j["steps"] = report.summary.steps;
  j["loss"] = number(report.loss);
  j["grad_y0_norm"] = number(report.grad_y0_norm);
  j["grad_theta_norm"] = number(report.grad_theta_norm);
  Json grad = Json::array();
  for (double g : report.grad_theta) grad.push_back(number(g));
  j["grad_theta"] = std::move(grad);
  j["parameter_names"] = report.parameter_names;
  // θ by name (by index when the names are not known).
  Json parameters = Json::object();
  for (std::size_t i = 0; i < report.parameters.size(); ++i)
    parameters[i < report.parameter_names.size() ? report.parameter_names[i]
                                                 : "theta[" + std::to_string(i) + "]"] =
        number(report.parameters[i]);
  j["parameters"] = std::move(parameters);
  // One line when the gradient is zero or negligible or the state stopped changing; else null.
  j["degenerate"] =
      report.summary.health.degenerate() ? Json(report.summary.health.describe()) : Json(nullptr);
  const FiniteDifferenceCheck& fd = report.fd;
  if (!report.fd_checked) {
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
  j["stats"] = stats_json(report.summary);
  j["schedule"] = report.checkpointed ? schedule_json(report) : Json(nullptr);
  j["drift"] = report.checkpointed ? drift_json(report.checkpoint) : Json(nullptr);
  // --backend cuda: the device and the device memory the run used; null on the CPU backends.
  if (report.device)
    j["device"] = {{"name", report.device->name},
                   {"memory_total_bytes", report.device->total_bytes},
                   {"memory_used_bytes", report.device->used_bytes},
                   {"memory_samples", report.device->samples}};
  else
    j["device"] = nullptr;
  return j;
}

}  // namespace rwd::cli
