// rewind/adjoint/store_all_adjoint.hpp — the reference adjoint driver: keep every state.
//
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 1000));
//   auto J = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
//   rwd::StoreAllAdjoint driver(stepper, J);
//   auto result = driver.run(y0, theta);       // result.loss, .grad_y0, .grad_theta, .summary
//
// One forward sweep stores (y_n, carry_n) for every step; the reverse sweep runs the adjoint
// step of each in reverse order. Memory is O(N · state size): the checkpointed driver exists for
// everything long, and must reproduce this driver's gradient bit for bit.
//
// Gradient: J = g(y_N) + Σ_k g_k(y_k);  λ_N = ∂g/∂y_N (+ ∂g_N/∂y_N if step N is observed),
// λ_n = Φ_n'ᵀ λ_{n+1} + ∂g_n/∂y_n,  dJ/dy0 = λ_0,  dJ/dθ = Σ_n (∂Φ_n/∂θ)ᵀ λ_{n+1}.
//
// The terminal cost and each reverse step are those of CheckpointedAdjoint, shared
// (detail/adjoint_steps.hpp), and the summary is filled as every driver fills it
// (detail/summary_finisher.hpp); the observer in StoreAllOptions sees every step
// (rewind/adjoint/step_observer.hpp).
//
// Keeping stages (StoreAllOptions::keep_stages, a rwd::StageKeepingStepper): each step's kept
// vectors (stage_count() of them, the first being y_n) instead of y_n alone, and every step but
// the last reversed from them without re-running it — l forward steps instead of 2l − 1, the
// same bits, stage_count() times the memory. Worth it where a step is dear to re-run: an
// implicit method's Newton iterations. The last step is reversed as without (re-run once), so
// a stop condition's shortened last step is handled the same way.
//
// With fixed steps all storage is allocated before the first step, and the step and reverse
// loops do not allocate. With adaptive steps the number of states is unknown, so a state vector
// is allocated each time the run grows past what is held (amortised growth of the index).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rewind/adjoint/detail/adjoint_steps.hpp"
#include "rewind/adjoint/detail/describe_method.hpp"
#include "rewind/adjoint/detail/summary_finisher.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/parameter_gradient_watch.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/run_end.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
#include "rewind/parallel.hpp"
#include "rewind/physical_memory.hpp"
#include "rewind/stop_condition.hpp"

namespace rwd {

struct StoreAllOptions {
  // Refuse runs whose stored states would exceed this many bytes (0 = half of physical memory).
  // Fixed-step runs are refused before any work; adaptive ones as soon as they grow past it.
  std::int64_t memory_limit_bytes = 0;
  // Check every state and adjoint for NaN/Inf (one extra pass over each vector per step).
  bool check_finite = true;
  // Summary::health, as CheckpointOptions::assess_health.
  bool assess_health = true;
  // Called at every forward and reverse step (rewind/adjoint/step_observer.hpp); none by default.
  StepObserver observer;
  // Keep every step's stage values (the file's top); refused before any work for a stepper that
  // cannot hand them out.
  bool keep_stages = false;

  void validate() const {
    if (memory_limit_bytes < 0)
      detail::fail<InvalidArgument>("memory_limit_bytes = ", memory_limit_bytes,
                                    " must be >= 0 (0 = half of physical memory)");
  }
};

template <class Stepper>
class StoreAllAdjoint {
  static_assert(
      TimeStepper<Stepper>,
      "StoreAllAdjoint needs a rwd::TimeStepper (rewind/integrators/stepper_concepts.hpp): "
      "state_size, parameter_size, planned_steps, finished, initial_carry, step, "
      "adjoint_step, counters, reset_counters");

 public:
  using Backend = typename Stepper::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // The stepper must outlive the driver; the objective is copied. With a stop condition the run
  // ends where it first holds (rewind/stop_condition.hpp); the stepper's own end is then a cap.
  StoreAllAdjoint(Stepper& stepper, const Objective<Backend>& objective,
                  StoreAllOptions options = {},
                  std::optional<StopCondition<Backend>> stop = std::nullopt)
      : stepper_(stepper), objective_(objective), options_(options), run_end_(stepper, stop) {
    options_.validate();
    if constexpr (StageKeepingStepper<Stepper>) {
      if (options_.keep_stages) units_ = stepper_.stage_count();
    } else if (options_.keep_stages) {
      detail::fail<InvalidArgument>(
          "StoreAllOptions::keep_stages: ", detail::describe_method(stepper_),
          " cannot hand out its stage values (it is no rwd::StageKeepingStepper: stage_count, "
          "step_keeping_stages, adjoint_step_from_stages)");
    }
  }

  GradientResult<Vector> run(const Vector& y0, const Vector& theta) {
    const Index n = stepper_.state_size();
    const Index p = stepper_.parameter_size();
    detail::require_run_inputs<B>(y0, theta, n, p);
    detail::require_observation_times_landed(objective_, stepper_);
    GradientResult<Vector> result;
    Summary& summary = result.summary;
    auto start = std::chrono::steady_clock::now();
    reserve_storage();
    summary.setup_seconds = seconds_since(start);

    stepper_.reset_counters();
    detail::AdjointSteps<Stepper> adjoint(stepper_, objective_, run_end_, options_.observer,
                                          options_.check_finite);
    start = std::chrono::steady_clock::now();

    // ---- forward sweep: store (y_n, carry_n) for n = 0..N−1, then the terminal cost ----------
    Vector y = B::zeros(n), grad = B::zeros(n), lambda = B::zeros(n);
    double loss = 0.0;
    Carry last = forward_sweep(y0, theta, adjoint, y, grad, loss);
    const Index steps = last.step;
    const auto i_last = static_cast<std::size_t>(steps - 1);
    // With event location the last step is re-taken to end on the event.
    const detail::RunClose closed =
        adjoint.close(state(i_last), carries_[i_last], theta, y, last, grad, lambda, loss);
    summary.forward_seconds = seconds_since(start);
    const auto forward_counters = stepper_.counters();

    // ---- reverse sweep ------------------------------------------------------------------
    start = std::chrono::steady_clock::now();
    Vector mu = B::zeros(p);
    // λ and μ checked for NaN/Inf at their cadences (parameter_gradient_watch.hpp).
    detail::ParameterGradientWatch<B, Stepper> watch(stepper_, n, p, options_.check_finite);
    for (Index k = steps - 1; k >= 0; --k) {
      const auto i = static_cast<std::size_t>(k);
      if (units_ > 0 && k < steps - 1)
        reverse_from_stages(adjoint, i, theta, lambda, mu, grad, watch);
      else
        adjoint.reverse(state(i), carries_[i], theta, k == steps - 1, y, closed.t_final, lambda, mu,
                        grad, watch);
    }
    summary.reverse_seconds = seconds_since(start);

    finish(summary, steps, forward_counters, closed.t_final);
    if (options_.assess_health)
      summary.health = assess_gradient<B>(loss, y0, theta, lambda, mu, closed.final_change, steps);
    result.loss = loss;
    result.grad_y0 = std::move(lambda);
    result.grad_theta = std::move(mu);
    result.y_final = std::move(y);
    return result;
  }

 private:
  // What one step keeps: y_n (or its stage_count() vectors) and its carry.
  std::int64_t bytes_per_state() const {
    return vectors_per_step() * stepper_.state_size() * static_cast<std::int64_t>(sizeof(double)) +
           static_cast<std::int64_t>(sizeof(Carry));
  }
  std::int64_t vectors_per_step() const { return units_ > 0 ? units_ : 1; }

  // y_n: the first of the step's kept vectors (stages[0] = y_n by the StageKeepingStepper
  // contract).
  const Vector& state(std::size_t step) const {
    return states_[step * static_cast<std::size_t>(vectors_per_step())];
  }
  std::span<Vector> kept(std::size_t step) {
    return std::span<Vector>(states_).subspan(step * static_cast<std::size_t>(vectors_per_step()),
                                              static_cast<std::size_t>(vectors_per_step()));
  }

  void reverse_from_stages(detail::AdjointSteps<Stepper>& adjoint, std::size_t step,
                           const Vector& theta, Vector& lambda, Vector& mu, Vector& grad,
                           detail::ParameterGradientWatch<B, Stepper>& watch) {
    if constexpr (StageKeepingStepper<Stepper>) {
      const std::span<Vector> stages = kept(step);
      adjoint.reverse_from_stages(std::span<const Vector>(stages.data(), stages.size()),
                                  carries_[step], theta, lambda, mu, grad, watch);
    }
  }
  std::int64_t memory_limit() const {
    return options_.memory_limit_bytes > 0 ? options_.memory_limit_bytes
                                           : detail::half_physical_memory();
  }

  // A run of known length is checked against the memory limit and its storage allocated before
  // the first step.
  void reserve_storage() {
    const Index planned = run_end_.length_known() ? stepper_.planned_steps() : -1;
    if (planned <= 0) return;
    detail::require_observed_steps_planned(objective_, planned);
    const std::int64_t limit = memory_limit(), bytes = bytes_per_state();
    if (planned > limit / bytes)
      detail::fail<InvalidArgument>(
          "store-all would keep ", planned, " states of ", bytes, " bytes (",
          planned * bytes / (1 << 20), " MiB), above the memory limit of ", limit / (1 << 20),
          " MiB; use the checkpointed driver or raise memory_limit_bytes");
    ensure_capacity(planned);
  }

  // Stores (y_n, carry_n) for n = 0 … l−1 and sums their observations into `loss`; returns with
  // y = the ordinary step from y_{l−1} and its carry.
  Carry forward_sweep(const Vector& y0, const Vector& theta,
                      const detail::AdjointSteps<Stepper>& adjoint, Vector& y, Vector& grad,
                      double& loss) {
    const std::int64_t limit = memory_limit(), bytes = bytes_per_state();
    B::copy(y0, y);
    Carry carry = stepper_.initial_carry(y, theta);
    detail::notify(options_.observer, StepKind::start, carry.step, carry.t);
    Index count = 0;
    for (;;) {
      if (count >= static_cast<Index>(carries_.size())) {
        if ((count + 1) > limit / bytes)
          detail::fail<InvalidArgument>(
              "store-all passed the memory limit of ", limit / (1 << 20), " MiB at step ", count,
              " (t = ", carry.t, "); use the checkpointed driver or raise memory_limit_bytes");
        for (std::int64_t v = 0; v < vectors_per_step(); ++v)
          states_.push_back(B::zeros(stepper_.state_size()));
        carries_.push_back(Carry{});
      }
      loss += adjoint.observe(carry, y, grad);
      carries_[static_cast<std::size_t>(count)] = carry;
      take_step(y, carry, theta, static_cast<std::size_t>(count));
      ++count;
      if (options_.check_finite) detail::require_finite_state<B>(y, carry);
      detail::notify(options_.observer, StepKind::forward, carry.step, carry.t);
      if (run_end_.ends_at(carry, y)) return carry;
    }
  }

  // One forward step from (y, carry), keeping y_n — or, keeping stages, the step's kept vectors.
  void take_step(Vector& y, Carry& carry, const Vector& theta, std::size_t count) {
    if constexpr (StageKeepingStepper<Stepper>) {
      if (units_ > 0) {
        stepper_.step_keeping_stages(y, carry, theta, kept(count));
        return;
      }
    }
    // Streaming stores: the state is read again only in the reverse sweep (backend.hpp).
    copy_streaming<B>(y, states_[count]);
    stepper_.step(y, carry, theta);
  }

  // The forward sweep advances l − 1 steps to y_{l−1} (p = l − 1, store-all's plan and
  // revolve's p(l, c >= l)) and takes the terminal step to y_l, which, as in a checkpointed run,
  // is in the rhs evaluations but not in p; each reverse step re-runs one: l + p = 2l − 1.
  // `forward`: the stepper's counters after the forward sweep.
  template <class Counters>
  void finish(Summary& summary, Index steps, const Counters& forward, double t_final) {
    const auto& total = stepper_.counters();
    detail::SweepCounts counts;
    counts.steps = steps;
    counts.rejected_steps = forward.rejected_attempts;
    // Keeping stages, no step but the last is re-run, and that one is not counted (as above).
    counts.recomputed_steps = units_ > 0 ? 0 : steps - 1;
    counts.forward_steps = steps + counts.recomputed_steps;
    counts.reversed_steps = steps;
    counts.rhs_evaluations_forward = forward.rhs_evaluations;
    counts.rhs_evaluations_reverse = total.rhs_evaluations - forward.rhs_evaluations;
    counts.vjp_evaluations = total.vjp_evaluations;
    counts.stores = steps;
    counts.restores = steps;
    counts.t_final = t_final;
    detail::finish_summary<B>(summary, detail::describe_method(stepper_),
                              units_ > 0 ? "store-all-stages" : "store-all", stepper_.state_size(),
                              stepper_.parameter_size(), counts);
    summary.storage.level_entry(LevelKind::memory).peak_bytes = steps * bytes_per_state();
  }

  void ensure_capacity(Index steps) {
    const Index n = stepper_.state_size();
    const auto vectors = static_cast<std::size_t>(steps * vectors_per_step());
    states_.reserve(vectors);
    while (states_.size() < vectors) states_.push_back(B::zeros(n));
    carries_.resize(static_cast<std::size_t>(steps));
  }

  Stepper& stepper_;
  Objective<Backend> objective_;
  StoreAllOptions options_;
  detail::RunEnd<Stepper> run_end_;
  std::vector<Vector> states_;  // y_n of every step, or its vectors_per_step() kept vectors
  std::vector<Carry> carries_;
  int units_ = 0;  // the vectors a step keeps with keep_stages, else 0
};

}  // namespace rwd
