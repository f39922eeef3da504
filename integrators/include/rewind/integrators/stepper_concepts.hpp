// rewind/integrators/stepper_concepts.hpp — what a stepper can do, declared as C++20 concepts.
//
//   static_assert(rwd::TimeStepper<rwd::ExplicitRungeKutta<rwd::Lorenz63<>>>);
//   if constexpr (rwd::StageKeepingStepper<S>) { … reverse from kept stage values … }
//
// A stepper is one step forward, y_n → y_{n+1}, and its exact adjoint, λ_{n+1} → λ_n with
// μ += (∂y_{n+1}/∂θ)ᵀ λ_{n+1}, over a backend's vectors and a Carry (rewind/carry.hpp) that makes
// every step reproducible from (y_n, carry_n). That much is TimeStepper, which every gradient
// driver needs. Everything else a stepper may offer is one capability, one concept below; a
// driver states with these concepts what it needs (a static_assert or requires-clause for what
// it cannot run without; `if constexpr` for what it uses when present) and, when a run asks for
// a capability the stepper lacks, refuses it with a message that names the concept.
//
// A new stepper family (implicit methods, say) implements TimeStepper, then whichever of the
// capabilities it can, and nothing else: no driver needs to learn its name.
//
//   concept                      what a driver does with it
//   TimeStepper                  every forward and adjoint step of every driver
//   SelfDescribingStepper        names its method in Summary::method (otherwise the tableau
//                                and step control of a Runge–Kutta stepper are described)
//   StageKeepingStepper          keeps a step's stage values and reverses the step from them
//                                without re-running it (stage-aware schedules)
//   LastStepShorteningStepper    takes its last step with a given size and gives dJ/dh of it
//                                (a stop condition whose event lies inside the last step)
//   TimeLandingStepper           says whether every run has a state at exactly time t
//                                (objectives that observe times instead of step indices)
//   HeldTermsDroppingStepper     forgets parameter-gradient terms held back inside a step when
//                                a reverse sweep is abandoned by an error
//   ButcherTableauStepper        an explicit Runge–Kutta engine's tableau, step control and
//                                problem (the backsolve adjoint integrates the augmented
//                                system with them)
#pragma once

#include <concepts>
#include <span>
#include <string>

#include "rewind/carry.hpp"
#include "rewind/types.hpp"

namespace rwd {

// One step forward and its exact adjoint. `step` advances (y, carry) by one accepted step;
// `adjoint_step` reverses the step that starts at (y_n, carry_n): λ ← (∂y_{n+1}/∂y_n)ᵀ λ and
// μ ← μ + (∂y_{n+1}/∂θ)ᵀ λ. `planned_steps()` is the run's length when known before the run
// (−1 otherwise: adaptive steps); `finished(carry)` says where the stepper's own run ends.
// `counters()` counts the work (right-hand sides, vector–Jacobian products) for the summary.
template <class S>
concept TimeStepper = requires(S& s, const S& cs, typename S::Backend::Vector& v,
                               const typename S::Backend::Vector& cv, Carry& c, const Carry& cc) {
  typename S::Backend;
  { cs.state_size() } -> std::convertible_to<Index>;
  { cs.parameter_size() } -> std::convertible_to<Index>;
  { cs.planned_steps() } -> std::convertible_to<Index>;
  { cs.finished(cc) } -> std::convertible_to<bool>;
  { s.initial_carry(cv, cv) } -> std::convertible_to<Carry>;
  s.step(v, c, cv);
  s.adjoint_step(cv, cc, cv, v, v);
  cs.counters();
  s.reset_counters();
};

// A stepper that names its own method (e.g. "bdf (CVODES), rtol = …"), for Summary::method.
template <class S>
concept SelfDescribingStepper = requires(const S& cs) {
  { cs.describe() } -> std::convertible_to<std::string>;
};

// Takes a step handing out the stage_count() vectors its reverse needs (each of the state's
// size), and reverses that step from them, bit for bit as adjoint_step() would, with no forward
// step re-run. The first of them is y_n itself, bit for bit: the drivers read the step's start
// there (an observation at step n, a schedule restoring from a stage snapshot). Used by the
// stage-aware schedules and by store-all keeping stages, which keep the stages of some or every
// step instead of re-running it in the reverse sweep.
template <class S>
concept StageKeepingStepper = TimeStepper<S> &&
    requires(S& s, const S& cs, typename S::Backend::Vector& v,
             const typename S::Backend::Vector& cv, Carry& c, const Carry& cc,
             std::span<typename S::Backend::Vector> out,
             std::span<const typename S::Backend::Vector> in) {
  { cs.stage_count() } -> std::convertible_to<int>;
  s.step_keeping_stages(v, c, cv, out);
  s.adjoint_step_from_stages(in, cc, cv, v, v);
};

// Takes one step of exactly size h whatever its step control says (step_sized), and reverses
// it giving dJ/dh too (adjoint_step_sized); differentiates_step_size() says whether that
// derivative exists for its problem (autonomous, or ∂f/∂t given). Used to end a run on an
// event located inside its last step (rewind/stop_condition.hpp): the last step is shortened to
// the event and the event time is differentiated.
template <class S>
concept LastStepShorteningStepper = TimeStepper<S> &&
    requires(S& s, typename S::Backend::Vector& v, const typename S::Backend::Vector& cv, Carry& c,
             const Carry& cc, double h) {
  s.step_sized(v, c, cv, h);
  { s.adjoint_step_sized(cv, cc, cv, h, v, v) } -> std::convertible_to<double>;
  { S::differentiates_step_size() } -> std::convertible_to<bool>;
};

// Says whether every run of the stepper has a state at exactly time t (an adaptive explicit or
// diagonally implicit Runge–Kutta or Rosenbrock run with t among its stop times does). Needed by
// objectives that observe times (Objective::at_times) rather than step indices.
template <class S>
concept TimeLandingStepper = requires(const S& cs, double t) {
  { cs.lands_on(t) } -> std::convertible_to<bool>;
};

// Forgets the parameter-gradient terms its problem holds back until a step's last stage
// (rwd::nn::NeuralOde::defer_parameter_gradients). A reverse sweep abandoned by an error calls
// it, so that none of those terms reaches a μ that no longer exists, or the next run's.
template <class S>
concept HeldTermsDroppingStepper = requires(S& s) {
  s.drop_held_parameter_terms();
};

// An explicit Runge–Kutta engine: its Butcher tableau, step control and problem, and the size of
// its last step. The backsolve adjoint integrates the augmented adjoint system backwards with
// the forward run's tableau over the forward run's steps.
template <class S>
concept ButcherTableauStepper = TimeStepper<S> && requires(const S& cs) {
  cs.tableau();
  cs.control();
  cs.problem();
  { cs.last_step_size() } -> std::convertible_to<double>;
};

}  // namespace rwd
