// src/cli/distributed_run.cpp — see distributed_run.hpp.
#include "distributed_run.hpp"

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "problem_parameters.hpp"
#include "process_group.hpp"
#include "rewind/distributed/distributed_brusselator.hpp"
#include "rewind/distributed/distributed_cvodes.hpp"  // CVODES on the distributed N_Vector
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/distributed/distributed_heat2d.hpp"
#include "rewind/distributed/distributed_lorenz96.hpp"
#include "rewind/distributed/distributed_plugin_stencil.hpp"

namespace rwd::cli {
namespace {

// The forms of the built-in problems whose state splits across ranks (those whose facts say
// distributed_form), each constructed as Model(n, communicator) and found by its name.
template <class... Models>
struct ModelList {};
using DistributedModels =
    ModelList<DistributedGrayScott, DistributedHeat2D, DistributedLorenz96, DistributedBrusselator>;

template <class P>
RunReport run_split(const P& problem, const RunSettings& settings, const PlanCallback& on_plan) {
  using B = typename P::Backend;
  const typename B::Vector y0 = problem.default_initial_state();
  typename B::Vector theta = problem.default_parameters();  // replicated: every rank all of it
  std::vector<double> values = host_values<B>(theta);
  apply_parameter_values(settings.parameters, values);
  B::copy_from_host(values, theta);
  ProcessGroup::begin_work();
  return run_gradient(problem, y0, theta, P::parameter_names(), settings, on_plan);
}

// Whether Model is the split form of `problem` (its name, in any of the accepted spellings).
template <class Model>
bool splits(const ProblemInfo& problem) {
  return find_problem(Model::name) == &problem;
}

// Runs the model of the list that is the split form of the settings' problem; nullopt if none is.
template <class... Models>
std::optional<RunReport> run_named_split(ModelList<Models...>, const RunSettings& settings,
                                         const PlanCallback& on_plan, const Communicator& world) {
  std::optional<RunReport> report;
  const auto run_if_named = [&]<class Model>(std::type_identity<Model>) {
    if (!report && splits<Model>(*settings.problem))
      report = run_split(Model(settings.n, world), settings, on_plan);
  };
  (run_if_named(std::type_identity<Models>{}), ...);
  return report;
}

// Whether one model of the list is the split form of `problem`.
template <class... Models>
bool split_form_listed(ModelList<Models...>, const ProblemInfo& problem) {
  return (splits<Models>(problem) || ...);
}

// The names of the listed models that name no built-in problem.
template <class... Models>
std::vector<std::string> unknown_split_models(ModelList<Models...>) {
  std::vector<std::string> unknown;
  ((find_problem(Models::name) ? void() : void(unknown.emplace_back(Models::name))), ...);
  return unknown;
}

}  // namespace

std::vector<std::string> split_form_mismatches() {
  std::vector<std::string> found;
  for (const ProblemInfo& p : problem_table()) {
    const bool listed = split_form_listed(DistributedModels{}, p);
    if (listed && !p.distributed_form)
      found.push_back(p.name + ": a split model is listed, but its facts say no distributed form");
    if (!listed && p.distributed_form)
      found.push_back(p.name +
                      ": its facts say it has a distributed form, but no split model is "
                      "listed in DistributedModels");
  }
  for (const std::string& name : unknown_split_models(DistributedModels{}))
    found.push_back(name + ": a split model whose name is no built-in problem");
  return found;
}

bool splits_across_ranks(const ProblemInfo& problem) {
  return problem.distributed_form;
}

std::string problems_split_across_ranks() {
  std::string names;
  for (const ProblemInfo& p : problem_table())
    if (splits_across_ranks(p)) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

RunReport run_gradient_across_ranks(const RunSettings& settings, const PlanCallback& on_plan) {
  if (settings.problem->run_across_ranks)
    return settings.problem->run_across_ranks(settings, on_plan);
  const Communicator world = Communicator::world();
  std::optional<RunReport> report = run_named_split(DistributedModels{}, settings, on_plan, world);
  if (!report)
    rwd::detail::fail<InvalidArgument>(
        settings.problem->name, " does not split its state across ranks (", world.size(),
        " ranks here); the problems that do: ", problems_split_across_ranks(),
        ", and stencil models on 2-D and 3-D grids (--model). Run it without mpirun");
  return std::move(*report);
}

RunReport run_stencil_model_across_ranks(const StencilPlugin& plugin, const RunSettings& settings,
                                         const PlanCallback& on_plan) {
  using B = DistributedBackend;
  const std::vector<Index> sizes(static_cast<std::size_t>(plugin.dimension()), settings.n);
  // Refusals the same on every rank (sizes, rank count, parameters) come before any work ...
  const DistributedPluginStencilProblem problem(plugin, sizes, Communicator::world());
  DistributedVector theta = problem.default_parameters();  // replicated: every rank all of it
  std::vector<double> values = host_values<B>(theta);
  apply_parameter_values(settings.parameters, values);
  B::copy_from_host(values, theta);
  // ... a failure from here on may be one rank's (the whole-grid initial state's memory, a
  // model's exception in its cells): it ends the job rather than leave the others waiting.
  ProcessGroup::begin_work();
  const DistributedVector y0 = problem.initial_state(theta);
  const ThroughInitialState<DistributedVector> through_y0 =
      [&](const DistributedVector& grad_y0, const DistributedVector& grad_theta) {
        return problem.total_parameter_gradient(theta, grad_y0, grad_theta);
      };
  return run_gradient(problem, y0, theta, problem.parameter_names(), settings, on_plan, {},
                      through_y0);
}

}  // namespace rwd::cli
