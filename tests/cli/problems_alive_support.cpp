// The runs behind problems_alive_support.hpp, compiled once for both tests that use them.
#include "problems_alive_support.hpp"

#include "../../src/cli/builtin_problems.hpp"
#include "../../src/cli/gradient_run.hpp"
#include "../../src/cli/run_settings.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::cli::testing {

Outcome run_like_the_cli(const std::string& name, std::optional<Index> n,
                         std::optional<Index> steps) {
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
