// src/cli/stencil_model_problem.cpp — see stencil_model_problem.hpp.
#include "stencil_model_problem.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data_fit_run.hpp"
#if REWIND_CLI_WITH_MPI
#include "distributed_run.hpp"
#endif
#include "fit_run.hpp"
#include "gradient_run.hpp"
#include "observation_run.hpp"
#include "problem_parameters.hpp"
#include "rewind/error.hpp"
#include "step_timing.hpp"

namespace rwd::cli {
namespace {

// The grid of a model that declares no default_grid_size: 32 cells per dimension, or the
// stencil's span where that is larger.
constexpr Index kStencilDefaultGrid = 32;
// Run lengths of a model that declares none (as for a templated model).
constexpr double kStencilDefaultDt = 0.01;
constexpr Index kStencilDefaultSteps = 100;

Index default_grid(const StencilPlugin& plugin) {
  if (plugin.default_grid_size() > 0) return plugin.default_grid_size();
  const std::vector<Index> smallest = plugin.min_sizes();
  return std::max(kStencilDefaultGrid, *std::max_element(smallest.begin(), smallest.end()));
}

// The model on the grid of n cells per dimension (the plugin refuses n below the stencil's span,
// naming the dimension and the smallest size).
PluginStencilProblem on_grid(const StencilPlugin& plugin, Index n) {
  return plugin.on_grid(std::vector<Index>(static_cast<std::size_t>(plugin.dimension()), n));
}

// Refuses a model the command line cannot start: no default parameters, no initial_cell, or a
// state or rhs that is not finite at the start on the default grid (the first such value named).
void require_runnable(const StencilPlugin& plugin) {
  const std::string which = "model '" + plugin.path() + "' (" + plugin.name() + ")";
  if (!plugin.has_default_parameters())
    rwd::detail::fail<InvalidArgument>(which,
                                       " declares no default_parameters; the command line starts "
                                       "from them");
  if (!plugin.has_initial_state())
    rwd::detail::fail<InvalidArgument>(which,
                                       " declares no initial_cell(p, at, y0); the command line "
                                       "starts from it");
  const Index n = default_grid(plugin);
  const PluginStencilProblem problem = on_grid(plugin, n);
  const Eigen::VectorXd theta = plugin.default_parameters();
  const Eigen::VectorXd y0 = problem.initial_state(theta);
  Eigen::VectorXd f(problem.state_size());
  problem.rhs(0.0, y0, theta, f);
  const std::vector<std::string> fields = plugin.field_names();
  const Index cells = problem.cell_count();
  // "v at cell 17 of the 32-per-side grid": entry i, named only for a refusal.
  const auto where = [&](Index i) {
    return fields[static_cast<std::size_t>(i / cells)] + " at cell " + std::to_string(i % cells) +
           " of the " + std::to_string(n) + "-per-side grid";
  };
  for (Index i = 0; i < problem.state_size(); ++i) {
    if (!std::isfinite(y0[i]))
      rwd::detail::fail<InvalidArgument>(which, ": initial_cell gives ", where(i), " = ", y0[i],
                                         " at the default parameters; it must be finite");
    if (!std::isfinite(f[i]))
      rwd::detail::fail<InvalidArgument>(which, ": the cell update gives d/dt of ", where(i), " = ",
                                         f[i],
                                         " at t = 0 from the initial state and default "
                                         "parameters; it must be finite");
  }
}

std::string describe(const StencilPlugin& plugin) {
  std::string text = "stencil model " + plugin.name() + " (" + plugin.path() + ") on a " +
                     std::to_string(plugin.dimension()) + "-D grid; theta = (";
  const std::vector<std::string> names = plugin.parameter_names();
  const Eigen::VectorXd theta = plugin.default_parameters();
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i] + " = " + rwd::cli::detail::shortest(theta[i]);
  return text + ")";
}

}  // namespace

ProblemInfo stencil_model_entry(const StencilPlugin& plugin) {
  require_runnable(plugin);
  ProblemInfo info;
  info.name = plugin.name();
  info.identity = model_file_identity(plugin.path());
  info.description = describe(plugin);
  // As the built-in PDEs say it: n cells per side of the grid (n^D cells).
  info.size_meaning = plugin.dimension() == 1 ? "grid cells n" : "grid side n";
  info.default_n = default_grid(plugin);
  info.default_dt = plugin.default_dt() > 0.0 ? plugin.default_dt() : kStencilDefaultDt;
  info.default_steps = plugin.default_steps() > 0 ? plugin.default_steps() : kStencilDefaultSteps;
  for (const std::string& name : plugin.parameter_names())
    info.parameters.push_back({name, ParameterDomain::any});
  const std::vector<std::string> fields = plugin.field_names();
  for (std::size_t k = 0; k < fields.size(); ++k)
    info.fields.push_back({fields[k], static_cast<Index>(k), static_cast<Index>(fields.size())});
  info.grid_fields = plugin.dimension() == 2;

  info.parameter_names = [plugin](Index) { return plugin.parameter_names(); };
  info.defaults = [plugin](Index n) {
    const Eigen::VectorXd theta = plugin.default_parameters();
    return ProblemDefaults{on_grid(plugin, n).initial_state(theta), theta,
                           plugin.parameter_names()};
  };
  info.initial_state = [plugin](Index n, const Eigen::VectorXd& theta) {
    return on_grid(plugin, n).initial_state(theta);
  };
  info.run = [plugin](const RunSettings& settings, const PlanCallback& on_plan) {
    const PluginStencilProblem problem = on_grid(plugin, settings.n);
    Eigen::VectorXd parameters = plugin.default_parameters();
    apply_parameter_values(settings.parameters, parameters);
    const Eigen::VectorXd y0 = problem.initial_state(parameters);
    const ThroughInitialState<Eigen::VectorXd> through_y0 = [&](const Eigen::VectorXd& grad_y0,
                                                                const Eigen::VectorXd& grad_theta) {
      return problem.total_parameter_gradient(parameters, grad_y0, grad_theta);
    };
    return run_gradient(problem, y0, parameters, plugin.parameter_names(), settings, on_plan, {},
                        through_y0);
  };
#if REWIND_CLI_WITH_MPI
  // Under mpirun the grid splits across the ranks (a 1-D grid by equal blocks of cells).
  info.distributed_form = true;
  info.run_across_ranks = [plugin](const RunSettings& settings, const PlanCallback& on_plan) {
    return run_stencil_model_across_ranks(plugin, settings, on_plan);
  };
#endif
  info.observe = [plugin](const RunSettings& settings, const Observations& recording) {
    return observe_problem(on_grid(plugin, settings.n), settings, recording);
  };
  info.fit = [plugin](const FitSettings& settings, const FitIterationCallback& on_iteration,
                      const FitStageCallback& on_stage) {
    return run_fit_on(on_grid(plugin, settings.run.n), settings, on_iteration, on_stage);
  };
  info.fit_data = [plugin](const DataFitSettings& settings,
                           const FitIterationCallback& on_iteration,
                           const FitStageCallback& on_stage) {
    return run_data_fit_on(on_grid(plugin, settings.n), settings, on_iteration, on_stage);
  };
  return info;
}

ModelStepTiming time_stencil_model_step(const StencilPlugin& plugin, const RunSettings& settings) {
  const PluginStencilProblem problem = on_grid(plugin, settings.n);
  const Eigen::VectorXd theta = plugin.default_parameters();
  ModelStepTiming timing = time_steps(problem, problem.initial_state(theta), theta, settings);
  timing.name = plugin.name();
  return timing;
}

}  // namespace rwd::cli
