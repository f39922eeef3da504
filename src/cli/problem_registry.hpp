// src/cli/problem_registry.hpp — the problems the `rewind` tool can run, by name.
//
//   const rwd::cli::ProblemInfo& info = rwd::cli::require_problem("lorenz-96");  // → lorenz96
//   rwd::cli::ProblemDefaults d = info.defaults(/*n=*/40);   // y0, θ and θ's names
//   rwd::cli::RunReport report = info.run(settings, on_plan);
//
// One list (problem_table(), filled in builtin_problems.cpp from builtin_problems.hpp) holds
// every problem as a value: what the problem declares about itself (rwd::ProblemFacts: names, a
// description, parameters and their domains, state fields, default sizes, its other forms) and
// the operations the subcommands run on it, type-erased, so that nothing here switches on which
// problem it is. A model loaded as a plugin provides the same value. Names are matched
// case-insensitively with '-' and '_' interchangeable (lotka-volterra, Gray_Scott, van-der-pol
// all work).
//
// Free of CLI11/JSON; the table itself is compiled into rewind_cli_commands.
#pragma once

#include <Eigen/Core>
#include <cctype>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {
struct FitIteration;  // rewind/fit/fit_parameters.hpp
}  // namespace rwd

namespace rwd::cli {

struct RunSettings;       // run_settings.hpp
struct RunReport;         // run_report.hpp
struct CheckpointReport;  // run_report.hpp
struct FitSettings;       // fit_run.hpp
struct FitReport;         // fit_run.hpp
struct DataFitSettings;   // data_fit_run.hpp
struct DataFitReport;     // data_fit_run.hpp

// Called with the plan of a checkpointed run before its scheduled sweep starts.
using PlanCallback = std::function<void(const CheckpointReport&)>;
// Called after each iteration of a fit.
using FitIterationCallback = std::function<void(const FitIteration&)>;
// Called before each stage of a continuation: stage (1-based), stages, its horizon and number of
// observed steps.
using FitStageCallback = std::function<void(int, int, Index, Index)>;

// A problem of one size as it starts: its default initial state and parameters, and θ's names.
struct ProblemDefaults {
  Eigen::VectorXd initial_state;
  Eigen::VectorXd parameters;
  std::vector<std::string> parameter_names;
};

// One problem the tool knows: its facts, and what the subcommands do with it. Every operation
// builds the problem of the size the settings name (ignored for fixed-size problems) and throws
// InvalidArgument for a size the problem refuses.
struct ProblemInfo : ProblemFacts {
  // What identifies the problem's code beyond its name, for a resumed run to match (empty for a
  // built-in problem: the tool's version says it; for a model plugin its path and a hash of the
  // file's bytes, so that a rebuilt plugin does not continue an older one's snapshots).
  std::string identity;
  // θ's names, in θ order, for the size n (cheap: builds no state).
  std::function<std::vector<std::string>(Index n)> parameter_names;
  // The defaults for the size n.
  std::function<ProblemDefaults(Index n)> defaults;
  // The initial state of the size n for the parameters θ: the default one for a built-in problem
  // (whose y0 does not depend on θ), initial_state(θ) for a model loaded as a plugin.
  std::function<Eigen::VectorXd(Index n, const Eigen::VectorXd& theta)> initial_state;
  // `rewind run`: J = ½|y_N|² from the defaults with --parameters applied, its gradient and
  // the spot check (gradient_run.hpp), on the Eigen backend in this process.
  std::function<RunReport(const RunSettings&, const PlanCallback&)> run;
  // `rewind run` under mpirun, split across the ranks, for a problem that is no built-in (a
  // stencil model plugin on a 2-D or 3-D grid, in a build with MPI: distributed_run.hpp); empty
  // otherwise (a built-in's split form is listed in distributed_run.cpp).
  std::function<RunReport(const RunSettings&, const PlanCallback&)> run_across_ranks;
  // `rewind generate`: H y_k + noise at the recording's observed steps, from its initial state
  // and parameters (observation_run.hpp); one column per observed step.
  std::function<Eigen::MatrixXd(const RunSettings&, const Observations&)> observe;
  // `rewind fit --observations` (fit_run.hpp).
  std::function<FitReport(const FitSettings&, const FitIterationCallback&, const FitStageCallback&)>
      fit;
  // `rewind fit --data`: a measured series, through rwd::fit (data_fit_run.hpp).
  std::function<DataFitReport(const DataFitSettings&, const FitIterationCallback&,
                              const FitStageCallback&)>
      fit_data;
};

// Every problem the tool knows, in the order --help lists them (builtin_problems.cpp).
const std::vector<ProblemInfo>& problem_table();

namespace detail {
// Lower case, '-' → '_'.
inline std::string normalise_problem_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(ch == '-' ? '_' : static_cast<char>(std::tolower(c)));
  }
  return out;
}

// "a, b, c": the names of the problems that `keep` accepts.
template <class Keep>
std::string problem_names_where(Keep keep) {
  std::string out;
  for (const ProblemInfo& info : problem_table()) {
    if (!keep(info)) continue;
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}
}  // namespace detail

// The entry for a name or alias; nullptr if there is none.
inline const ProblemInfo* find_problem(std::string_view name) {
  const std::string key = detail::normalise_problem_name(name);
  for (const ProblemInfo& info : problem_table()) {
    if (key == info.name) return &info;
    if (!info.alias.empty() && key == detail::normalise_problem_name(info.alias)) return &info;
  }
  return nullptr;
}

// "linear, lorenz63, lorenz96, lotka_volterra, van_der_pol, gray_scott, heat2d, …".
inline std::string problem_name_list() {
  return detail::problem_names_where([](const ProblemInfo&) { return true; });
}

// "ornstein_uhlenbeck, stochastic_lorenz63": the problems with noise.
inline std::string noise_problem_list() {
  return detail::problem_names_where([](const ProblemInfo& p) { return p.noise; });
}

// The problems with device right-hand sides and VJPs that are worth a device (`rewind run
// --backend thrust|cuda`): the large ones (ProblemFacts::device_form).
inline bool runs_on_device(const ProblemInfo& problem) {
  return problem.device_form;
}
inline std::string device_problem_list() {
  return detail::problem_names_where(runs_on_device);
}

// Like find_problem, but refuses an unknown name with an InvalidArgument listing the known ones.
inline const ProblemInfo& require_problem(std::string_view name) {
  if (const ProblemInfo* info = find_problem(name)) return *info;
  rwd::detail::fail<InvalidArgument>("unknown problem '", name, "'; choose one of ",
                                     problem_name_list());
}

}  // namespace rwd::cli
