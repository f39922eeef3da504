// rewind/adjoint/differentiate.hpp — one entry point for every adjoint method, the method an
// argument (as diffrax's `adjoint=`): the same stepper, objective and inputs, differentiated by
// keeping every state, by checkpointing, or by the continuous backsolve adjoint.
//
//   auto a = rwd::differentiate(stepper, objective, y0, theta, rwd::StoreAllStrategy{});
//   auto b = rwd::differentiate(stepper, objective, y0, theta,
//                               rwd::CheckpointStrategy{rwd::revolve_schedule(20)});
//   auto c = rwd::differentiate(stepper, objective, y0, theta, rwd::BacksolveStrategy{});
//   // a.grad_theta and b.grad_theta are the same bits; c is the continuous adjoint's.
//
//   rwd::AdjointStrategy chosen = …;                                  // chosen at run time
//   rwd::GradientResult<V> r = rwd::differentiate(stepper, objective, y0, theta, chosen);
//
//   // A model whose initial state depends on θ (rwd::auto_problem of a model with
//   // initial_state(p, y0), or a plugin's): leave y0 out. The run starts from initial_state(θ)
//   // and grad_theta is the total dJ/dθ, θ's effect through y0 included.
//   auto d = rwd::differentiate(stepper, objective, theta, rwd::StoreAllStrategy{});
//
// Each strategy runs its driver (StoreAllAdjoint, CheckpointedAdjoint, BacksolveAdjoint) with the
// strategy's options and returns that driver's result; a strategy chosen at run time returns
// what they all return (GradientResult). A stop condition (rewind/stop_condition.hpp) ends the
// run where it first holds; the backsolve adjoint takes none. The drivers stay usable on their
// own — a driver kept across runs keeps its storage for the next (the store-all states, the
// checkpointed memory store) — while each call here makes its driver afresh.
#pragma once

#include <concepts>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
#include "rewind/problem.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/stop_condition.hpp"

namespace rwd {

// Every state kept in memory (rwd::StoreAllAdjoint): the reference, O(l) memory.
struct StoreAllStrategy {
  StoreAllOptions options = {};
};

// A checkpointing schedule in a snapshot budget (rwd::CheckpointedAdjoint): bitwise the
// store-all gradient in O(c) snapshots. The planner is called once, when the run's length is
// known (or the online schedule runs, for a run of unknown length and an online budget).
struct CheckpointStrategy {
  Planner planner;
  CheckpointOptions options = {};
};

// The continuous adjoint solved backwards with the forward run's tableau
// (rwd::BacksolveAdjoint): an approximation, for comparison; needs a ButcherTableauStepper.
struct BacksolveStrategy {
  BacksolveOptions options = {};
};

// A method chosen at run time.
using AdjointStrategy = std::variant<StoreAllStrategy, CheckpointStrategy, BacksolveStrategy>;

template <TimeStepper Stepper>
GradientResult<typename Stepper::Backend::Vector> differentiate(
    Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
    const typename Stepper::Backend::Vector& y0, const typename Stepper::Backend::Vector& theta,
    const StoreAllStrategy& strategy,
    std::optional<StopCondition<typename Stepper::Backend>> stop = std::nullopt) {
  StoreAllAdjoint driver(stepper, objective, strategy.options, std::move(stop));
  return driver.run(y0, theta);
}

template <TimeStepper Stepper>
CheckpointedResult<typename Stepper::Backend::Vector> differentiate(
    Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
    const typename Stepper::Backend::Vector& y0, const typename Stepper::Backend::Vector& theta,
    const CheckpointStrategy& strategy,
    std::optional<StopCondition<typename Stepper::Backend>> stop = std::nullopt) {
  CheckpointedAdjoint driver(stepper, objective, strategy.options, std::move(stop));
  return driver.run(y0, theta, strategy.planner);
}

template <TimeStepper Stepper>
requires ButcherTableauStepper<Stepper> BacksolveResult<typename Stepper::Backend::Vector>
differentiate(Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
              const typename Stepper::Backend::Vector& y0,
              const typename Stepper::Backend::Vector& theta, const BacksolveStrategy& strategy) {
  BacksolveAdjoint driver(stepper, objective, strategy.options);
  return driver.run(y0, theta);
}

// The strategy chosen at run time; what every driver returns. A backsolve is refused with a
// stop condition, or with a stepper that is no ButcherTableauStepper.
template <TimeStepper Stepper>
GradientResult<typename Stepper::Backend::Vector> differentiate(
    Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
    const typename Stepper::Backend::Vector& y0, const typename Stepper::Backend::Vector& theta,
    const AdjointStrategy& strategy,
    std::optional<StopCondition<typename Stepper::Backend>> stop = std::nullopt) {
  using Result = GradientResult<typename Stepper::Backend::Vector>;
  if (const auto* store_all = std::get_if<StoreAllStrategy>(&strategy))
    return differentiate(stepper, objective, y0, theta, *store_all, std::move(stop));
  if (const auto* checkpoint = std::get_if<CheckpointStrategy>(&strategy))
    return Result(differentiate(stepper, objective, y0, theta, *checkpoint, std::move(stop)));
  if (stop)
    detail::fail<InvalidArgument>(
        "the backsolve adjoint takes no stop condition; use the store-all or checkpoint "
        "strategy for a run that ends on a condition");
  if constexpr (ButcherTableauStepper<Stepper>) {
    return Result(
        differentiate(stepper, objective, y0, theta, std::get<BacksolveStrategy>(strategy)));
  } else {
    detail::fail<InvalidArgument>(
        "the backsolve strategy integrates the adjoint system with the forward run's Butcher "
        "tableau, but this stepper is no rwd::ButcherTableauStepper (tableau, control, problem, "
        "last_step_size)");
  }
}

// A stepper whose problem starts from initial_state(θ) and can carry dJ/dy0 back to θ
// (rewind/problem.hpp's InitialStateFromParameters: rwd::AutoProblem, rwd::PluginModel).
template <class Stepper>
concept StartsFromParameters = requires(const Stepper& stepper) {
  requires InitialStateFromParameters<std::remove_cvref_t<decltype(stepper.problem())>>;
};

// The run from the problem's initial_state(θ), by any strategy (or one chosen at run time): the
// result of differentiate(stepper, objective, initial_state(θ), θ, strategy) with grad_theta the
// total derivative dJ/dθ + (∂y0/∂θ)ᵀ dJ/dy0; grad_y0 stays dJ/dy0. The initial state's vjp is
// the problem's own (derived exactly for a templated model), so the checkpointed and store-all
// strategies still give the same bits. A model that declares no initial_state is refused by
// the problem (InvalidArgument) before any step.
template <class Strategy>
concept OneAdjointStrategy =
    std::same_as<Strategy, StoreAllStrategy> || std::same_as<Strategy, CheckpointStrategy> ||
    std::same_as<Strategy, BacksolveStrategy> || std::same_as<Strategy, AdjointStrategy>;

template <TimeStepper Stepper, OneAdjointStrategy Strategy, class... Stop>
requires StartsFromParameters<Stepper>
auto differentiate(Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
                   const typename Stepper::Backend::Vector& theta, const Strategy& strategy,
                   Stop&&... stop) {
  const auto& problem = stepper.problem();
  const typename Stepper::Backend::Vector y0 = problem.initial_state(theta);
  auto result = differentiate(stepper, objective, y0, theta, strategy, std::forward<Stop>(stop)...);
  result.grad_theta = problem.total_parameter_gradient(theta, result.grad_y0, result.grad_theta);
  return result;
}

}  // namespace rwd
