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
// Each strategy runs its driver (StoreAllAdjoint, CheckpointedAdjoint, BacksolveAdjoint) with the
// strategy's options and returns that driver's result; a strategy chosen at run time returns
// what they all return (GradientResult). A stop condition (rewind/stop_condition.hpp) ends the
// run where it first holds; the backsolve adjoint takes none. The drivers stay usable on their
// own — a driver kept across runs keeps its storage for the next (the store-all states, the
// checkpointed memory store) — while each call here makes its driver afresh.
#pragma once

#include <optional>
#include <utility>
#include <variant>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
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

}  // namespace rwd
