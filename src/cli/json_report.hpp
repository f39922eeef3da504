// src/cli/json_report.hpp — `rewind run`'s report as one JSON object, for scripts.
//
//   rewind run lorenz96 --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["loss"])'
//
// Keys: "rewind_version", "problem", "n" (null for fixed-size problems), "method", "adaptive",
// "dt", "t_final", "rtol"/"atol" (null for fixed steps), "state_size", "parameter_size", "steps",
// "loss", "grad_y0_norm", "grad_theta_norm", "grad_theta", "parameter_names",
// "fd_check" {"seed", "epsilon" (smallest step used), "first_epsilon", "epsilon_rule",
// "loss_evaluations", "steps_frozen", "directional_fd", "fd_error_estimate",
// "directional_adjoint", "resolution", "rel_error", "verdict"} (see FiniteDifferenceCheck in
// run_report.hpp; null with --no-fd-check) and "stats" (every Summary field, plus total_seconds and
// gradient_cost_ratio). Numbers are written with 17 significant digits; a non-finite number is
// written as null.
#pragma once

#include <nlohmann/json.hpp>

#include "run_report.hpp"

namespace rwd::cli {

nlohmann::ordered_json run_report_json(const RunReport& report);

}  // namespace rwd::cli
