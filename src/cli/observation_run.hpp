// src/cli/observation_run.hpp — what `rewind generate PROBLEM` computes: synthetic observations
// of a built-in problem, recorded with everything a fit needs (rwd::Observations).
//
//   rwd::cli::GenerateOptions options;
//   options.run.problem = "gray_scott";
//   options.run.checkpoint.steps = "20000";
//   options.observe_every = "1000";
//   options.observe = "v";
//   options.noise = 0.01;
//   rwd::Observations data = rwd::cli::generate_observations(options);
//   rwd::save_observations("gs.h5", data);
//
// The run uses the problem's defaults (size, step, method, initial state, θ) with what the
// options change (--n, --dt, --method and its flags, --parameters); the method's tolerances,
// linear solver and Newton tolerances are recorded with it (Observations::method_settings);
// observed steps are K, 2K, … up to the horizon; the noise is Gaussian with standard deviation
// --noise from a counter-based hash of (--seed, step, component), the same on every machine.
//
// Free of CLI11/JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "byte_size.hpp"
#include "gradient_run.hpp"
#include "problem_fields.hpp"
#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// The options of `rewind generate PROBLEM` as given.
struct GenerateOptions {
  RunOptions run;                            // problem, --n, --dt, --method, --parameters, --steps
  std::optional<std::string> observe_every;  // --observe-every K (required)
  std::string observe = "all";               // --observe FIELD
  double noise = 0.0;                        // --noise SIGMA
  std::uint64_t seed = 1;                    // --seed S (of the noise), 0 … 2^64 − 1
};

// H y_k + noise at the recording's observed steps, from its initial state and parameters, stepped
// by the method the settings name: what ProblemInfo::observe does for a built-in problem.
template <class P>
Eigen::MatrixXd observe_problem(const P& problem, const RunSettings& settings,
                                const Observations& recording) {
  Eigen::MatrixXd data;
  with_stepper(problem, settings, settings.control, [&](auto& stepper) {
    data = observe_trajectory(stepper, recording.initial_state, recording.parameters,
                              recording.observed_steps, recording.field, recording.noise,
                              recording.seed);
  });
  return data;
}

// What a fit must repeat of the method `settings` ran, beyond its name: BDF's tolerances, an
// implicit method's Newton tolerances, and the linear solver as --linear-solver named it (empty:
// the method's own choice for the problem, which a fit makes again).
inline MethodSettings recorded_method_settings(const RunSettings& settings,
                                               const RunOptions& options) {
  MethodSettings recorded;
  recorded.linear_solver = options.linear_solver;
  if (const auto* bdf = std::get_if<BdfMethod>(&settings.method)) {
    recorded.rtol = bdf->options.rtol;
    recorded.atol = bdf->options.atol.front();
  }
  if (const auto* implicit = std::get_if<ImplicitRungeKuttaMethod>(&settings.method)) {
    recorded.newton_rtol = implicit->newton.rtol;
    recorded.newton_atol = implicit->newton.atol;
  }
  return recorded;
}

inline Observations generate_observations(const GenerateOptions& options) {
  if (!options.observe_every)
    rwd::detail::fail<InvalidArgument>("--observe-every K is required: observe every K steps");
  if (!std::isfinite(options.noise) || options.noise < 0.0)
    rwd::detail::fail<InvalidArgument>("--noise = ", options.noise,
                                       " must be finite and >= 0 (a standard deviation)");
  const std::uint64_t seed = options.seed;
  RunOptions run = options.run;
  run.no_fd_check = true;
  const RunSettings settings = resolve_run_settings(run);
  if (settings.control.is_adaptive())
    rwd::detail::fail<InvalidArgument>("observations are taken at fixed steps: drop --adaptive");
  const Index steps = settings.control.steps;  // bdf: intervals of --dt
  const Index every = parse_count("--observe-every", *options.observe_every);
  if (every > steps)
    rwd::detail::fail<InvalidArgument>("--observe-every = ", every, " exceeds the horizon of ",
                                       steps, " steps: nothing would be observed");

  const ProblemInfo& info = *settings.problem;
  const ProblemDefaults defaults = info.defaults(settings.n);
  Observations out;
  out.problem = info.name;
  out.size = settings.n;
  out.state_size = static_cast<Index>(defaults.initial_state.size());
  out.method = method_name(settings.method);
  out.method_settings = recorded_method_settings(settings, run);
  out.dt = settings.control.dt;
  out.steps = steps;
  out.parameter_names = defaults.parameter_names;
  out.parameters = defaults.parameters;
  apply_parameter_values(settings.parameters, out.parameters);
  out.field = require_field("--observe", options.observe, info, out.state_size);
  out.noise = options.noise;
  out.seed = seed;
  out.observed_steps = every_kth_step(steps, every);
  out.initial_state = info.initial_state(settings.n, out.parameters);
  out.data = info.observe(settings, out);
  out.validate();
  return out;
}

}  // namespace rwd::cli
