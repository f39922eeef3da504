// src/cli/builtin_problems.cpp — problem_table() (problem_registry.hpp): the registry's values for
// the built-in problems of builtin_problems.hpp, each operation instantiated for the problem's
// own model type.
#include "builtin_problems.hpp"

#include <vector>

#include "data_fit_run.hpp"
#include "fit_run.hpp"
#include "gradient_run.hpp"
#include "observation_run.hpp"
#include "problem_registry.hpp"

namespace rwd::cli {
namespace {

template <class D>
ProblemInfo builtin_entry() {
  ProblemInfo info;
  static_cast<ProblemFacts&>(info) = D::facts();
  info.parameter_names = [](Index n) { return D::make(n).parameter_names(); };
  info.defaults = [](Index n) {
    const auto problem = D::make(n);
    return ProblemDefaults{problem.default_initial_state(), problem.default_parameters(),
                           problem.parameter_names()};
  };
  info.initial_state = [](Index n, const Eigen::VectorXd&) {
    return D::make(n).default_initial_state();
  };
  info.run = [](const RunSettings& settings, const PlanCallback& on_plan) {
    return run_gradient_from_defaults(D::make(settings.n), settings, on_plan);
  };
  info.observe = [](const RunSettings& settings, const Observations& recording) {
    return observe_problem(D::make(settings.n), settings, recording);
  };
  info.fit = [](const FitSettings& settings, const FitIterationCallback& on_iteration,
                const FitStageCallback& on_stage) {
    return run_fit_on(D::make(settings.run.n), settings, on_iteration, on_stage);
  };
  info.fit_data = [](const DataFitSettings& settings, const FitIterationCallback& on_iteration,
                     const FitStageCallback& on_stage) {
    return run_data_fit_on(D::make(settings.n), settings, on_iteration, on_stage);
  };
  return info;
}

}  // namespace

const std::vector<ProblemInfo>& problem_table() {
  static const std::vector<ProblemInfo> table = [] {
    std::vector<ProblemInfo> entries;
    for_each_declaration(BuiltinProblems{}, [&]<class D>(std::type_identity<D>) {
      entries.push_back(builtin_entry<D>());
    });
    return entries;
  }();
  return table;
}

}  // namespace rwd::cli
