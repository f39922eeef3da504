// src/cli/model_problem.cpp — see model_problem.hpp.
#include "model_problem.hpp"

#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "data_fit_run.hpp"
#include "fit_run.hpp"
#include "gradient_run.hpp"
#include "observation_run.hpp"
#include "problem_parameters.hpp"
#include "rewind/error.hpp"
#include "rewind/plugin_model.hpp"
#include "run_settings.hpp"
#include "stencil_model_problem.hpp"
#include "step_timing.hpp"

namespace rwd::cli {
namespace {

// Run lengths of a model that declares none.
constexpr double kModelDefaultDt = 0.01;
constexpr Index kModelDefaultSteps = 100;

// Refuses a model the command line cannot start: no default parameters, no initial state, or an
// rhs that is not finite there.
void require_runnable(const PluginModel& model) {
  if (!model.has_default_parameters())
    rwd::detail::fail<InvalidArgument>(
        "model '", model.path(), "' (", model.name(),
        ") declares no default_parameters; the command line starts from them");
  if (!model.has_initial_state())
    rwd::detail::fail<InvalidArgument>("model '", model.path(), "' (", model.name(),
                                       ") declares no initial_state(p, y0); the command line "
                                       "starts from it");
  const Eigen::VectorXd theta = model.default_parameters();
  const Eigen::VectorXd y0 = model.initial_state(theta);
  Eigen::VectorXd f(model.state_size());
  model.rhs(0.0, y0, theta, f);
  const std::vector<std::string> names = model.state_names();
  for (Index i = 0; i < model.state_size(); ++i) {
    if (!std::isfinite(y0[i]))
      rwd::detail::fail<InvalidArgument>("model '", model.path(), "': initial_state gives ",
                                         names[i], " = ", y0[i],
                                         " at the default parameters; it "
                                         "must be finite");
    if (!std::isfinite(f[i]))
      rwd::detail::fail<InvalidArgument>("model '", model.path(), "': rhs gives d", names[i],
                                         "/dt = ", f[i],
                                         " at t = 0 from the initial state and "
                                         "default parameters; it must be finite");
  }
  if (!model.has_diffusion()) return;
  model.diffusion(0.0, y0, theta, f);
  for (Index i = 0; i < model.state_size(); ++i)
    if (!std::isfinite(f[i]))
      rwd::detail::fail<InvalidArgument>("model '", model.path(), "': diffusion gives g_", names[i],
                                         " = ", f[i],
                                         " at t = 0 from the initial state and default "
                                         "parameters; it must be finite");
}

}  // namespace

std::string model_file_identity(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail())
    rwd::detail::fail<InvalidArgument>("model '", path, "' cannot be read");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
  return path + " (xxh3 " + hex + ")";
}

namespace {

std::string describe(const PluginModel& model, const Eigen::VectorXd& theta) {
  std::string text = "model " + model.name() + " (" + model.path() + "); theta = (";
  const std::vector<std::string> names = model.parameter_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i] + " = " + rwd::cli::detail::shortest(theta[i]);
  return text + ")";
}

ProblemInfo model_entry(const PluginModel& model) {
  require_runnable(model);
  ProblemInfo info;
  const Eigen::VectorXd theta = model.default_parameters();
  info.name = model.name();
  info.identity = model_file_identity(model.path());
  info.description = describe(model, theta);
  info.fixed_state_size = model.state_size();
  info.default_dt = model.default_dt() > 0.0 ? model.default_dt() : kModelDefaultDt;
  info.default_steps = model.default_steps() > 0 ? model.default_steps() : kModelDefaultSteps;
  info.noise = model.has_diffusion();  // stepped by euler_maruyama (default) or milstein
  for (const std::string& name : model.parameter_names())
    info.parameters.push_back({name, ParameterDomain::any});
  const std::vector<std::string> states = model.state_names();
  for (std::size_t i = 0; i < states.size(); ++i)
    info.fields.push_back({states[i], static_cast<Index>(i), static_cast<Index>(states.size())});

  info.parameter_names = [model](Index) { return model.parameter_names(); };
  info.defaults = [model](Index) {
    const Eigen::VectorXd defaults = model.default_parameters();
    return ProblemDefaults{model.initial_state(defaults), defaults, model.parameter_names()};
  };
  info.initial_state = [model](Index, const Eigen::VectorXd& parameters) {
    return model.initial_state(parameters);
  };
  info.run = [model](const RunSettings& settings, const PlanCallback& on_plan) {
    Eigen::VectorXd parameters = model.default_parameters();
    apply_parameter_values(settings.parameters, parameters);
    const Eigen::VectorXd y0 = model.initial_state(parameters);
    const ThroughInitialState<Eigen::VectorXd> through_y0 = [&](const Eigen::VectorXd& grad_y0,
                                                                const Eigen::VectorXd& grad_theta) {
      return model.total_parameter_gradient(parameters, grad_y0, grad_theta);
    };
    return run_gradient(model, y0, parameters, model.parameter_names(), settings, on_plan, {},
                        through_y0);
  };
  info.observe = [model](const RunSettings& settings, const Observations& recording) {
    return observe_problem(model, settings, recording);
  };
  info.fit = [model](const FitSettings& settings, const FitIterationCallback& on_iteration,
                     const FitStageCallback& on_stage) {
    return run_fit_on(model, settings, on_iteration, on_stage);
  };
  info.fit_data = [model](const DataFitSettings& settings, const FitIterationCallback& on_iteration,
                          const FitStageCallback& on_stage) {
    return run_data_fit_on(model, settings, on_iteration, on_stage);
  };
  return info;
}

}  // namespace

const ProblemInfo& load_model_problem(const std::string& path) {
  // Entries never move (a RunSettings points at one) and live until the process ends, with
  // their libraries loaded.
  static std::mutex mutex;
  static std::deque<std::pair<std::string, ProblemInfo>> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  const std::string key = ec ? path : canonical.string();
  for (const auto& [known, info] : loaded)
    if (known == key) return info;
  auto [library, description] = rwd::detail::open_model_plugin(path);
  ProblemInfo info = description->grid_dimension != 0
                         ? stencil_model_entry(StencilPlugin(library, description, path))
                         : model_entry(PluginModel(library, description, path));
  return loaded.emplace_back(key, std::move(info)).second;
}

ModelStepTiming time_model_step(const std::string& path, const std::string& method,
                                std::optional<Index> n) {
  const ProblemInfo& info = load_model_problem(path);  // the refusals, once
  if (n && !info.sized())
    rwd::detail::fail<InvalidArgument>("--n ", *n, ": model '", path, "' (", info.name,
                                       ") has a fixed state of ", info.fixed_state_size,
                                       " values; --n sizes a stencil model's grid");
  RunOptions options;  // the run's defaults for the model, and its refusals of the method
  options.model = path;
  options.method = method;
  options.n = n;
  const RunSettings settings = resolve_run_settings(options);
  if (info.sized()) return time_stencil_model_step(load_stencil_plugin(path), settings);
  const PluginModel model = load_model_plugin(path);
  const Eigen::VectorXd theta = model.default_parameters();
  ModelStepTiming timing = time_steps(model, model.initial_state(theta), theta, settings);
  timing.name = model.name();
  return timing;
}

}  // namespace rwd::cli
