// src/cli/json_report.cpp — see json_report.hpp.
#include "json_report.hpp"

#include <cmath>

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
  j["peak_stored_bytes"] = s.peak_stored_bytes;
  j["forward_seconds"] = number(s.forward_seconds);
  j["recompute_seconds"] = number(s.recompute_seconds);
  j["reverse_seconds"] = number(s.reverse_seconds);
  j["total_seconds"] = number(s.total_seconds());
  j["gradient_cost_ratio"] = number(s.gradient_cost_ratio());
  j["t_final"] = number(s.t_final);
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
  j["method"] = s.tableau.name;
  j["adaptive"] = adaptive;
  // Fixed: the step; adaptive: the first step tried (0 = chosen automatically).
  j["dt"] = number(s.control.dt);
  j["t_final"] = number(r.summary.t_final);
  j["rtol"] = adaptive ? number(s.control.rtol) : Json(nullptr);
  j["atol"] = adaptive ? number(s.control.atol) : Json(nullptr);
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
                     {"verdict", fd.verdict}};
  }
  j["stats"] = stats_json(r.summary);
  return j;
}

}  // namespace rwd::cli
