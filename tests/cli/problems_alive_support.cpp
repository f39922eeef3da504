// The runs behind problems_alive_support.hpp: the tool's own gradient run of a built-in problem
// (ProblemInfo::run, compiled once in rewind_cli_commands), as `rewind run` makes it.
#include "problems_alive_support.hpp"

#include "../../src/cli/run_report.hpp"
#include "../../src/cli/run_settings.hpp"

namespace rwd::cli::testing {

namespace {
Eigen::VectorXd vector_of(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Index>(values.size()));
}
}  // namespace

Outcome run_like_the_cli(const std::string& name, std::optional<Index> n,
                         std::optional<Index> steps) {
  RunOptions o;
  o.problem = name;
  o.n = n;
  if (steps) o.checkpoint.steps = std::to_string(*steps);
  o.checkpoint.snapshots = "20";
  o.no_fd_check = true;
  const RunSettings s = resolve_run_settings(o);
  const RunReport r = s.problem->run(s, {});
  return Outcome{r.loss, vector_of(r.final_state), vector_of(r.grad_y0), vector_of(r.grad_theta),
                 r.summary};
}

}  // namespace rwd::cli::testing
