// Shared by problems_alive_test.cpp and problems_alive_long_test.cpp: a built-in problem run as
// `rewind run NAME [--n N] [--steps L] --snapshots 20` runs it (its defaults for everything not
// given: size, step, method), through the library's checkpointed driver so that the final state
// comes back too.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <optional>
#include <string>

#include "../../src/cli/builtin_problems.hpp"
#include "../../src/cli/gradient_run.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "../../src/cli/run_settings.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::cli::testing {

struct Outcome {
  double loss = 0.0;
  Eigen::VectorXd y_final, grad_y0, grad_theta;
  Summary summary;

  bool gradient_finite() const {
    return std::isfinite(loss) && grad_y0.allFinite() && grad_theta.allFinite();
  }
  // Gray–Scott: the spatial standard deviation of v (the second half of the state).
  double std_of_v() const {
    const Eigen::ArrayXd v = y_final.tail(y_final.size() / 2).array();
    return std::sqrt((v - v.mean()).square().mean());
  }
};

inline Outcome run_like_the_cli(const std::string& name, std::optional<Index> n = {},
                                std::optional<Index> steps = {}) {
  RunOptions o;
  o.problem = name;
  o.n = n;
  if (steps) o.checkpoint.steps = std::to_string(*steps);
  o.no_fd_check = true;
  const RunSettings s = resolve_run_settings(o);
  return with_builtin_problem(*s.problem, s.n, [&](const auto& problem) {
    const Eigen::VectorXd y0 = problem.default_initial_state();
    const Eigen::VectorXd theta = problem.default_parameters();
    return with_stepper(problem, s, s.control, [&](auto& stepper) {
      CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
      auto r = driver.run(y0, theta, revolve_schedule(20));
      return Outcome{r.loss, r.y_final, r.grad_y0, r.grad_theta, r.summary};
    });
  });
}

}  // namespace rwd::cli::testing
