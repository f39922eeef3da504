// src/cli/step_timing.hpp — what `rewind plan --model PATH --method NAME` measures on a model: one
// step of the method over a long run (rwd::measure_step_seconds), the adjoint cost F from a step
// and a reversed step on the same steps (rwd::measure_adjoint_step_seconds: a run's first steps),
// and for an implicit or Rosenbrock method the work behind each, per step, from the stepper's
// counters.
//
//   ModelStepTiming t = time_steps(problem, y0, theta, settings);  // settings: the run's defaults
//
// The steps are fixed, of the run's default size (settings.control.dt), from y0 with θ; every
// method the run takes is timed (explicit, implicit, Rosenbrock, bdf, the stochastic schemes).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gradient_run.hpp"
#include "model_problem.hpp"
#include "rewind/adjoint/measure_costs.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// A stepper whose work includes Newton iterations and factorisations (the diagonally implicit
// engine), or factorisations and second derivatives (the Rosenbrock methods).
template <class S>
concept NewtonCountingStepper = requires(const S& s) {
  { s.implicit_counters() } -> std::convertible_to<const ImplicitCounters&>;
};
template <class S>
concept RosenbrockCountingStepper = requires(const S& s) {
  { s.rosenbrock_counters() } -> std::convertible_to<const RosenbrockCounters&>;
};

namespace detail {

// "2.31 Newton iterations, 1 factorisation, …" per step: `count / steps` of each named count
// (`what` in the singular, an s added unless the rate is 1), those that are zero left out; empty
// when all are.
inline std::string per_step(const std::vector<std::pair<Index, const char*>>& counts, Index steps) {
  std::string text;
  for (const auto& [count, what] : counts) {
    if (count == 0) continue;
    const double rate = static_cast<double>(count) / static_cast<double>(steps);
    char number[32];
    std::snprintf(number, sizeof number, "%.3g ", rate);
    text += (text.empty() ? "" : ", ") + std::string(number) + what + (rate == 1.0 ? "" : "s");
  }
  return text;
}

// The work of the steps `stepper` took since its counters were reset, per step: `steps` of them.
template <class S>
std::string work_per_step(const S& stepper, Index steps) {
  if (steps <= 0) return {};
  if constexpr (NewtonCountingStepper<S>) {
    const ImplicitCounters& c = stepper.implicit_counters();
    return per_step({{c.newton_iterations, "Newton iteration"},
                     {c.jacobian_evaluations, "Jacobian"},
                     {c.factorizations, "factorisation"},
                     {c.adjoint_iterations, "transposed iteration"},
                     {c.gmres_products, "GMRES product"},
                     {c.newton_failures, "Newton failure"},
                     {c.substepped_steps, "step taken in substeps"}},
                    steps);
  } else if constexpr (RosenbrockCountingStepper<S>) {
    const RosenbrockCounters& c = stepper.rosenbrock_counters();
    return per_step({{c.jacobian_evaluations, "Jacobian"},
                     {c.factorizations, "factorisation"},
                     {c.second_derivative_evaluations, "second derivative"},
                     {c.time_derivative_evaluations, "time derivative"},
                     {c.substepped_steps, "step taken in substeps"}},
                    steps);
  } else {
    return {};
  }
}

}  // namespace detail

// One step of settings.method and one reversed step, on `problem` from y0 with θ (see the top).
// Fills everything but the model's name.
template <class P>
ModelStepTiming time_steps(const P& problem, const Eigen::VectorXd& y0,
                           const Eigen::VectorXd& theta, const RunSettings& settings) {
  // Long enough that the timing batches never start over (each stops by 100 000 steps).
  constexpr Index kSteps = Index{1} << 30;
  const StepControl control = StepControl::fixed(0.0, settings.control.dt, kSteps);
  return with_stepper(problem, settings, control, [&](auto& stepper) {
    ModelStepTiming timing;
    timing.method = method_name(settings.method);
    timing.state_size = stepper.state_size();
    timing.state_bytes = static_cast<std::int64_t>(timing.state_size) * 8;
    if constexpr (StageKeepingStepper<std::remove_cvref_t<decltype(stepper)>>)
      timing.stage_units = stepper.stage_count();
    timing.step_seconds = measure_step_seconds(stepper, y0, theta);
    const AdjointStepSeconds pair = measure_adjoint_step_seconds(
        stepper, y0, theta,
        [&](const auto& s) { timing.step_work = detail::work_per_step(s, s.counters().steps); });
    timing.first_step_seconds = pair.step_seconds;
    timing.first_adjoint_step_seconds = pair.adjoint_step_seconds;
    timing.adjoint_cost_factor = pair.adjoint_cost_factor();
    timing.adjoint_step_work = detail::work_per_step(stepper, stepper.counters().adjoint_steps);
    return timing;
  });
}

}  // namespace rwd::cli
