// rewind/adjoint/backsolve_adjoint.hpp — the continuous "backsolve" adjoint, next to the exact
// discrete one: the memory-light method that neural-ODE libraries default to (torchdiffeq's
// odeint_adjoint), here for comparison with rewind's exact gradients and for users who want it.
//
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 1000));
//   rwd::BacksolveOptions options;
//   options.reanchor = true;                      // reset y to the forward checkpoints
//   rwd::BacksolveAdjoint driver(stepper, objective, options);
//   auto result = driver.run(y0, theta);          // .loss, .grad_y0, .grad_theta, .summary
//   result.drift.max_rel_drift;                   // backward y against the forward checkpoints
//
// Method. The classical continuous adjoint (Cao, Li, Petzold & Serban, "Adjoint sensitivity
// analysis for differential-algebraic equations: the adjoint DAE system and its numerical
// solution", SIAM J. Sci. Comput. 24(3), 2003) as used for neural ODEs by Chen, Rubanova,
// Bettencourt & Duvenaud ("Neural Ordinary Differential Equations", NeurIPS 2018: Algorithm 1,
// and Figure 2 for losses at several observation times):
//   1. Forward sweep with the user's stepper: the loss J, and the state y_k at every
//      `anchor_interval`-th step k (k = 0, m, 2m, … < N) kept in memory as anchors.
//   2. The augmented system z = (y, a, g) (rwd::BacksolveSystem, in backsolve_system.hpp)
//        dy/dt = f(t, y, θ),   da/dt = −(∂f/∂y)ᵀ a,   dg/dt = −(∂f/∂θ)ᵀ a
//      is integrated from t_N down to t_0, starting from (y_N, ∂J/∂y_N, 0), with the SAME Butcher
//      tableau over the SAME steps as the forward run (in reversed time τ = t_N − t, so the
//      existing ExplicitRungeKutta steps it forwards with positive step sizes).
//   3. At each observation step k of the objective, a ← a + ∂g_k/∂y_k (a jump). By default the
//      gradient is evaluated at the forward sweep's y_k, computed and kept (one n-vector per
//      observation) during the forward sweep: this is what torchdiffeq and Chen et al. do —
//      autograd hands the backward solve ∂L/∂y(t_i) computed from the forward outputs — and
//      rewind's backsolve agrees with torchdiffeq's odeint_adjoint to round-off with it
//      (docs/neural_odes.md).
//      `observe_backward_states` evaluates it at the backward-reconstructed y_k instead — no
//      storage, but the jumps then carry the drift too; with `reanchor` that is the stored
//      forward state at anchor steps.
//   4. dJ/dy0 = a(t_0) and dJ/dθ = g(t_0).
// The loss comes from the forward sweep, summed in the same order as StoreAllAdjoint (so it is
// the same number bit for bit).
//
// What the gradient is. The continuous adjoint approximates dJ/dθ of the *exact ODE solution*;
// rewind's other drivers give the exact derivative of the *computed* discrete map (contract 1).
// The two differ by the discretisation error of both solves — O(h^q) for a method of order q —
// and by the error of the reconstructed y: integrating y backwards is unstable for dissipative
// and chaotic systems (the backward Lorenz-63 flow expands volume like e^{(σ+1+β)t}), so round-off
// and truncation errors grow until y_back no longer resembles the forward trajectory, and the
// gradient is lost (or the state overflows, which stops the run with a NumericalError).
//
// Drift (contract 4 of the design). At every anchor the backward y is compared with the stored
// forward state: ‖y_back − y_fwd‖₂ / ‖y_fwd‖₂ (exact norms — the anchors are full states, so no
// fingerprint estimate is needed). The report has the largest drift and its step, the first
// anchor of the backward sweep whose drift passes `drift_threshold`, and one sample per anchor;
// `drift_policy` says what passing the threshold does (ignore, warn once, fail). With `reanchor`,
// y is replaced by the anchor after the comparison, so each measured drift is that of one
// interval and the error stays bounded; without it (plain backsolve, the torchdiffeq behaviour)
// drift accumulates over the whole run. Drift is never exactly zero: an RK step backwards is not
// the inverse of the step forwards (O(h^{q+1}) per step).
//
// Step control. Fixed steps; prescribed steps; adaptive steps, whose accepted step sizes are
// recorded in the forward sweep (one double per step) and replayed in reverse order as
// prescribed steps of the backward solve (the backward solve has no error control of its own).
//
// Memory: ⌈N / anchor_interval⌉ states (≈ √N with the automatic interval), the augmented state
// and the backward stepper's stages (about (s + 3)·(2n + p) numbers for s stages), the
// observation gradients (unless `observe_backward_states`), and, for prescribed or adaptive steps,
// the step sizes and times (two doubles per step). Nothing of size N·n.
//
// Cost: N forward steps, then N steps of the augmented system, each stage of which costs one f
// and one vector-Jacobian product (RK4: 4N f + 4N (f + vjp)), against the discrete adjoint's
// replay of the forward stages. Any backend: the augmented system is written over the backend
// trait.
//
// Structure: run() prepares the anchors (prepare_forward), takes the forward sweep, then the
// backward one (re-anchoring and observation jumps in functions of their own); the summary is
// filled as every driver fills it (detail/summary_finisher.hpp), and BacksolveOptions::observer
// sees every forward step and every backward step (rewind/adjoint/step_observer.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/backsolve_system.hpp"
#include "rewind/adjoint/detail/describe_method.hpp"
#include "rewind/adjoint/detail/summary_finisher.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
#include "rewind/parallel.hpp"
#include "rewind/warning.hpp"

namespace rwd {

struct BacksolveOptions {
  // Keep the forward state every this many steps as an anchor (the state at step 0 is always
  // kept). 0 = automatic: ⌈√N⌉ when N is known before the run (fixed or prescribed steps); for
  // adaptive runs an interval that starts at 1 and doubles as the run grows, keeping between
  // about √(N/2) and √(2N) anchors. An interval ≥ N keeps y0 alone.
  Index anchor_interval = 0;
  // Replace the backward y by the anchor at every anchor step (after measuring the drift there).
  // Off by default: plain backsolve, what torchdiffeq and Chen et al. do, whose drift the report
  // then measures; on, the reconstruction error is bounded by that of one interval.
  bool reanchor = false;
  // Evaluate the observation gradients ∂g_k/∂y_k at the backward-reconstructed y_k (no storage)
  // instead of at the forward sweep's y_k (the default, as torchdiffeq: one stored n-vector per
  // observation). With reanchor, the reconstructed y at an anchor step is the anchor.
  bool observe_backward_states = false;
  // A relative drift ‖y_back − y_fwd‖ / ‖y_fwd‖ above this at an anchor counts as drift in the
  // report (first_drift_step, anchors_above_threshold) and triggers drift_policy. ≥ 0.
  double drift_threshold = 1e-6;
  // What drift above the threshold does: ignore (report only), warn (one rwd::warn at the first
  // such anchor: by default a line on stderr), fail (throw rwd::DriftError there). Backsolve always
  // drifts a little, so the default only reports.
  DriftPolicy drift_policy = DriftPolicy::ignore;
  // NaN/Inf in a forward state, in the augmented state or in an observation gradient stops the
  // run with rwd::NumericalError naming the step and the time (one pass over each vector per step).
  bool check_finite = true;
  // Called at every forward step and every backward step of the augmented system
  // (rewind/adjoint/step_observer.hpp; a backward step to y_k is reported as reversing step k);
  // none by default.
  StepObserver observer;

  void validate() const {
    if (anchor_interval < 0)
      detail::fail<InvalidArgument>("backsolve anchor_interval = ", anchor_interval,
                                    " must be >= 0 (0 = automatic, about sqrt(N))");
    if (!(drift_threshold >= 0.0) || !std::isfinite(drift_threshold))
      detail::fail<InvalidArgument>("backsolve drift_threshold = ", drift_threshold,
                                    " must be finite and >= 0");
  }
};

// The drift at one anchor, measured before any re-anchoring.
struct BacksolveDriftSample {
  Index step = 0;          // the anchor's step k
  double t = 0.0;          // t_k of the forward run
  double rel_drift = 0.0;  // ‖y_back − y_fwd‖₂ / ‖y_fwd‖₂ at step k
};

// The backward-reconstructed states against the forward anchors.
struct BacksolveDriftReport {
  double max_rel_drift = 0.0;  // the largest relative drift over the anchors
  Index max_drift_step = -1;   // the anchor where it was seen (−1: no anchor checked)
  double threshold = 0.0;      // BacksolveOptions::drift_threshold of the run
  // The first anchor in the order of the backward sweep (so the largest step index) whose drift
  // is above the threshold; −1 if none. The sweep had reconstructed N − first_drift_step steps.
  Index first_drift_step = -1;
  Index anchors_checked = 0;                  // anchors compared (every anchor below step N)
  Index anchors_above_threshold = 0;          // of those, how many drifted above the threshold
  Index reanchored = 0;                       // anchors at which y was reset (0 without reanchor)
  std::vector<BacksolveDriftSample> samples;  // one per anchor, in backward order (step N−… to 0)
};

template <class Vector>
struct BacksolveResult : GradientResult<Vector> {
  BacksolveDriftReport drift;
  Index anchor_interval = 0;  // the interval used (automatic choices resolved; adaptive: final)
  Index anchors = 0;          // forward states held at the end of the forward sweep
};

// What BacksolveAdjoint needs of a stepper: an explicit Runge–Kutta engine's tableau, step
// control and problem (the backward solve reuses the first two on the augmented system). The
// name of rwd::ButcherTableauStepper (rewind/integrators/stepper_concepts.hpp) for this driver.
template <class S>
concept BacksolveCompatibleStepper = ButcherTableauStepper<S>;

template <class Stepper>
class BacksolveAdjoint {
  static_assert(
      ButcherTableauStepper<Stepper>,
      "BacksolveAdjoint integrates the augmented adjoint system with the forward run's "
      "Butcher tableau: it needs a rwd::ButcherTableauStepper (tableau, control, problem, "
      "last_step_size), an explicit Runge-Kutta stepper (rwd::ExplicitRungeKutta)");

 public:
  using Backend = typename Stepper::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;
  using Model = std::remove_cvref_t<decltype(std::declval<const Stepper&>().problem())>;
  using System = BacksolveSystem<Model>;

  // The stepper must outlive the driver; the objective is copied. Options are validated here.
  BacksolveAdjoint(Stepper& stepper, Objective<Backend> objective, BacksolveOptions options = {})
      : stepper_(stepper), objective_(std::move(objective)), options_(options) {
    options_.validate();
  }

  const BacksolveOptions& options() const { return options_; }

  BacksolveResult<Vector> run(const Vector& y0, const Vector& theta) {
    require_inputs(y0, theta);
    BacksolveResult<Vector> result;
    stepper_.reset_counters();
    Forward forward = prepare_forward();
    auto start = std::chrono::steady_clock::now();
    // grad: scratch for the observation gradients of both sweeps.
    Vector y = B::zeros(stepper_.state_size()), grad = B::zeros(stepper_.state_size());
    Vector lambda = B::zeros(stepper_.state_size());
    const double loss = forward_sweep(y0, theta, forward, y, grad, lambda);
    result.summary.forward_seconds = seconds_since(start);
    const auto forward_counters = stepper_.counters();

    start = std::chrono::steady_clock::now();
    const Backward backward = backward_sweep(theta, forward, y, lambda, grad, result.drift);
    result.summary.reverse_seconds = seconds_since(start);

    result.loss = loss;
    result.grad_y0 = B::zeros(stepper_.state_size());
    result.grad_theta = B::zeros(stepper_.parameter_size());
    const Index n = stepper_.state_size();
    const double* zd = B::data(backward.z);
    detail::backsolve_copy<B>(zd + n, B::data(result.grad_y0), n);
    detail::backsolve_copy<B>(zd + 2 * n, B::data(result.grad_theta), stepper_.parameter_size());
    result.summary.health = assess_gradient<B>(loss, y0, theta, result.grad_y0, result.grad_theta,
                                               backward.final_change, forward.steps);
    result.y_final = std::move(y);
    result.anchor_interval = forward.interval;
    result.anchors = forward.used;
    finish(result.summary, forward, backward, forward_counters, result.drift.reanchored);
    return result;
  }

 private:
  // What the forward sweep keeps for the backward one.
  struct Forward {
    bool fixed = true;      // fixed steps: t_k = t0 + k·dt, no sizes or times kept
    bool thinning = false;  // adaptive with an automatic interval: it doubles as the run grows
    Index interval = 1;     // anchors every this many steps
    std::vector<Vector> anchors;  // anchors[j] = y at step j·interval, j < used
    Index used = 0;
    std::vector<Vector> observed;  // ∂g_k/∂y_k at the forward y_k for observed k < N, in order
    std::size_t observed_count = 0;
    std::vector<double> sizes, times;  // prescribed / adaptive: h_k and t_k of the forward run
    Index stores = 0;
    Index steps = 0;     // N
    double t_end = 0.0;  // t_N
    bool observes_last = false;
  };

  // What the backward sweep leaves: the augmented state (y, a, g) at t_0 and its counts.
  struct Backward {
    Vector z;
    double final_change = 0.0;
    Index steps = 0;
    Index rhs_evaluations = 0;
  };

  void require_inputs(const Vector& y0, const Vector& theta) const {
    detail::require_run_inputs<B>(y0, theta, stepper_.state_size(), stepper_.parameter_size());
    if (!objective_.observation_times().empty())
      detail::fail<InvalidArgument>(
          "the backsolve adjoint observes step indices only; for observation times use the "
          "checkpointed or store-all driver");
    // A problem defined step by step (explicit_runge_kutta.hpp) has no continuous adjoint to
    // solve backwards on steps of its own. It says whether it currently depends on its step
    // (depends_on_step(), e.g. nn::NeuralOde with step rates); without that query it is taken
    // to depend on it.
    if constexpr (requires(const Model& m) { m.begin_step(Index{0}); }) {
      bool depends = true;
      if constexpr (requires(const Model& m) {
                      { m.depends_on_step() } -> std::convertible_to<bool>;
                    })
        depends = stepper_.problem().depends_on_step();
      if (depends)
        detail::fail<InvalidArgument>(
            "the backsolve adjoint cannot differentiate a problem defined step by step "
            "(begin_step); use the checkpointed or store-all driver, whose reverse sweep "
            "revisits the forward run's own steps");
    }
    const Index planned = stepper_.planned_steps();  // −1: adaptive
    if (planned > 0) detail::require_observed_steps_planned(objective_, planned);
  }

  // The anchor interval and the forward sweep's storage, allocated before any work when N is
  // known.
  Forward prepare_forward() const {
    const Index n = stepper_.state_size();
    const StepControl& control = stepper_.control();
    const Index planned = stepper_.planned_steps();  // −1: adaptive
    Forward f;
    f.fixed = !control.is_adaptive() && !control.is_prescribed();
    f.thinning = options_.anchor_interval == 0 && planned < 0;
    f.interval = options_.anchor_interval;
    if (f.interval == 0)
      f.interval = planned > 0 ? std::max<Index>(1, static_cast<Index>(std::ceil(
                                                        std::sqrt(static_cast<double>(planned)))))
                               : 1;
    if (planned > 0) {
      const Index count = (planned - 1) / f.interval + 1;
      f.anchors.reserve(static_cast<std::size_t>(count));
      for (Index j = 0; j < count; ++j) f.anchors.push_back(B::zeros(n));
    }
    if (!options_.observe_backward_states)
      for (const Index k : objective_.observation_steps())
        if (planned < 0 || k < planned) f.observed.push_back(B::zeros(n));
    if (!f.fixed && planned > 0) {
      f.sizes.reserve(static_cast<std::size_t>(planned));
      f.times.reserve(static_cast<std::size_t>(planned + 1));
    }
    return f;
  }

  // Keeps y_k as an anchor when k is a multiple of the interval. Adaptive runs with an
  // automatic interval keep every other anchor when there are too many: those at multiples of
  // the doubled interval. Slot 2j moves to j (the positions read, 2j, are never written before
  // they are read).
  void keep_anchor(Index k, const Vector& y, Forward& f) const {
    if (k % f.interval != 0) return;
    const auto slot = static_cast<std::size_t>(k / f.interval);
    if (slot >= f.anchors.size()) f.anchors.push_back(B::zeros(stepper_.state_size()));
    B::copy(y, f.anchors[slot]);
    f.used = static_cast<Index>(slot) + 1;
    ++f.stores;
    if (f.thinning && f.used > 2 * f.interval + 1) {
      f.interval *= 2;
      for (Index j = 1; 2 * j < f.used; ++j)
        std::swap(f.anchors[static_cast<std::size_t>(j)],
                  f.anchors[static_cast<std::size_t>(2 * j)]);
      f.used = (f.used - 1) / 2 + 1;
    }
  }

  // The forward sweep: the loss, anchors, (observation gradients), step sizes; y becomes y_N
  // and λ = ∂J/∂y_N, where the backward solve starts.
  double forward_sweep(const Vector& y0, const Vector& theta, Forward& f, Vector& y, Vector& grad,
                       Vector& lambda) {
    B::copy(y0, y);
    Carry carry = stepper_.initial_carry(y, theta);
    detail::notify(options_.observer, StepKind::start, carry.step, carry.t);
    double loss = 0.0;
    while (!stepper_.finished(carry)) {
      const Index k = carry.step;
      if (objective_.observes(k)) {
        loss += observe(k, carry.t, y, grad);
        if (!options_.observe_backward_states) B::copy(grad, f.observed[f.observed_count++]);
      }
      keep_anchor(k, y, f);
      if (!f.fixed) f.times.push_back(carry.t);
      stepper_.step(y, carry, theta);
      if (!f.fixed) f.sizes.push_back(stepper_.last_step_size());
      if (options_.check_finite) detail::require_finite_state<B>(y, carry);
      detail::notify(options_.observer, StepKind::forward, carry.step, carry.t);
    }
    f.steps = carry.step;
    f.t_end = carry.t;
    if (!f.fixed) f.times.push_back(f.t_end);
    detail::require_observed_steps_taken(objective_, f.steps, f.t_end);
    // a(t_N) = ∂g/∂y_N (+ ∂g_N/∂y_N), at the forward y_N, where the backward solve starts.
    f.observes_last = objective_.observes(f.steps);
    if (f.observes_last) loss += observe(f.steps, f.t_end, y, grad);
    const double terminal = objective_.terminal(f.t_end, y, lambda);
    detail::require_finite_value(terminal, "terminal cost", f.steps, f.t_end);
    loss += terminal;
    if (f.observes_last) B::axpy(1.0, grad, lambda);
    return loss;
  }

  // The backward sweep: z = (y, a, g) from t_N to t_0 with the forward run's tableau over its
  // steps, the drift measured at every anchor and the observation jumps added.
  Backward backward_sweep(const Vector& theta, Forward& f, const Vector& y, const Vector& lambda,
                          Vector& grad, BacksolveDriftReport& drift) {
    const Index n = stepper_.state_size();
    const StepControl& control = stepper_.control();
    const Index steps = f.steps;
    auto time_of = [&](Index k) {
      // The forward run's t_k: fixed steps compute it as t0 + k·dt (as the stepper does).
      return f.fixed ? control.t0 + static_cast<double>(k) * control.dt
                     : f.times[static_cast<std::size_t>(k)];
    };
    System system(stepper_.problem(), f.t_end);
    StepControl backward_control = StepControl::fixed(0.0, control.dt, steps);
    if (!f.fixed)
      backward_control =
          StepControl::prescribed(0.0, std::vector<double>(f.sizes.rbegin(), f.sizes.rend()));
    ExplicitRungeKutta<System> backward(system, stepper_.tableau(), backward_control);
    Backward out{B::zeros(2 * n + stepper_.parameter_size())};
    Vector y_back = B::zeros(n);  // contiguous copy of the backward y for observation terms
    double* zd = B::data(out.z);
    detail::backsolve_copy<B>(B::data(y), zd, n);
    detail::backsolve_copy<B>(B::data(lambda), zd + n, n);
    if (options_.check_finite && !B::all_finite(lambda))
      detail::fail<NumericalError>("backsolve: the gradient of the terminal cost",
                                   f.observes_last ? " and of the observation term" : "",
                                   " at step ", steps, " (t = ", f.t_end,
                                   ") is non-finite (NaN or Inf)");
    drift.threshold = options_.drift_threshold;
    drift.samples.reserve(static_cast<std::size_t>(f.used));
    Carry back = backward.initial_carry(out.z, theta);
    out.final_change = std::numeric_limits<double>::quiet_NaN();  // Summary::health
    for (Index k = steps - 1; k >= 0; --k) {
      backward.step(out.z, back, theta);  // z: from step k + 1 to step k
      const double t = time_of(k);
      if (options_.check_finite && !B::all_finite(out.z)) fail_non_finite(out.z, n, k, t, drift);
      // The first backward step reconstructs y_{N−1} to the method's local error: the change of
      // the last forward step, for the stationarity check.
      if (k == steps - 1)
        out.final_change = detail::backsolve_relative_distance<B>(zd, B::data(y), n);
      reanchor(k, t, f, zd, drift);
      if (objective_.observes(k)) jump(k, t, f, zd, y_back, grad);
      detail::notify(options_.observer, StepKind::reverse, k, t);
    }
    out.steps = backward.counters().steps;
    out.rhs_evaluations = backward.counters().rhs_evaluations;
    return out;
  }

  // At an anchor step k: the drift of the backward y against the anchor, and with `reanchor`
  // the backward y replaced by it.
  void reanchor(Index k, double t, const Forward& f, double* zd, BacksolveDriftReport& drift) {
    if (k % f.interval != 0 || k / f.interval >= f.used) return;
    const Index n = stepper_.state_size();
    const Vector& anchor = f.anchors[static_cast<std::size_t>(k / f.interval)];
    check_drift(k, t, detail::backsolve_relative_distance<B>(zd, B::data(anchor), n), drift);
    if (options_.reanchor) {
      detail::backsolve_copy<B>(B::data(anchor), zd, n);
      ++drift.reanchored;
    }
  }

  // The observation jump a ← a + ∂g_k/∂y_k at an observed step k: at the forward y_k (kept), or
  // at the backward y_k.
  void jump(Index k, double t, Forward& f, double* zd, Vector& y_back, Vector& grad) {
    const Index n = stepper_.state_size();
    const Vector* at = &grad;
    if (!options_.observe_backward_states) {
      at = &f.observed[--f.observed_count];
    } else {
      detail::backsolve_copy<B>(zd, B::data(y_back), n);
      const double value = objective_.observation(k, t, y_back, grad);
      if (options_.check_finite)
        detail::require_finite_value(value, "observation term on the backward state", k, t);
    }
    if (options_.check_finite && !B::all_finite(*at))
      detail::fail<NumericalError>("backsolve: the gradient of the observation term at step ", k,
                                   " (t = ", t, ") is non-finite (NaN or Inf)");
    B::for_each_index(n, detail::BacksolveAddKernel{B::data(*at), zd + n});
  }

  // `restores`: the anchors at which y was reset.
  template <class Counters>
  void finish(Summary& summary, const Forward& f, const Backward& b,
              const Counters& forward_counters, Index restores) const {
    const std::int64_t state_bytes =
        stepper_.state_size() * static_cast<std::int64_t>(sizeof(double));
    detail::SweepCounts counts;
    counts.steps = f.steps;
    counts.rejected_steps = forward_counters.rejected_attempts;
    counts.forward_steps = f.steps;  // one forward sweep; nothing is re-run
    counts.recomputed_steps = 0;
    counts.reversed_steps = b.steps;  // steps of the augmented system
    counts.rhs_evaluations_forward = forward_counters.rhs_evaluations;
    // Each right-hand side of the augmented system is one f and one vjp of the model.
    counts.rhs_evaluations_reverse = b.rhs_evaluations;
    counts.vjp_evaluations = b.rhs_evaluations;
    counts.stores = f.stores;
    counts.restores = restores;
    counts.t_final = f.t_end;
    detail::finish_summary<B>(summary, detail::describe_method(stepper_),
                              describe_schedule(f.interval), stepper_.state_size(),
                              stepper_.parameter_size(), counts);
    summary.storage.level_entry(LevelKind::memory).peak_bytes =
        static_cast<std::int64_t>(f.anchors.size() + f.observed.size()) * state_bytes +
        static_cast<std::int64_t>(f.sizes.size() + f.times.size()) *
            static_cast<std::int64_t>(sizeof(double));
  }

  double observe(Index k, double t, const Vector& y, Vector& grad) {
    const double value = objective_.observation(k, t, y, grad);
    detail::require_finite_value(value, "observation term", k, t);
    return value;
  }

  void check_drift(Index k, double t, double rel, BacksolveDriftReport& drift) const {
    drift.samples.push_back({k, t, rel});
    ++drift.anchors_checked;
    if (drift.max_drift_step < 0 || rel > drift.max_rel_drift) {
      drift.max_rel_drift = rel;
      drift.max_drift_step = k;
    }
    if (!(rel > options_.drift_threshold)) return;
    ++drift.anchors_above_threshold;
    const bool first = drift.first_drift_step < 0;
    if (first) drift.first_drift_step = k;
    if (options_.drift_policy == DriftPolicy::fail)
      detail::fail<DriftError>("backsolve: the backward-reconstructed state at step ", k,
                               " (t = ", t,
                               ") differs from the forward checkpoint by a relative drift of ", rel,
                               " > drift_threshold = ", options_.drift_threshold,
                               "; set BacksolveOptions::reanchor, shorten anchor_interval or the "
                               "step size, or use the exact discrete adjoint");
    if (options_.drift_policy == DriftPolicy::warn && first)
      warn("backsolve", "backsolve state at step ", k, " (t = ", t,
           ") drifted from the forward checkpoint by ", rel, " (relative, threshold ",
           options_.drift_threshold, "); the gradient follows a different trajectory");
  }

  // Names the part of z that is not finite, the step and the time, and the drift seen so far.
  [[noreturn]] static void fail_non_finite(const Vector& z, Index n, Index k, double t,
                                           const BacksolveDriftReport& drift) {
    const Sums<3> bad =
        B::template sum_index<3>(B::size(z), detail::BacksolveNonFiniteKernel{B::data(z), n});
    std::ostringstream seen;
    seen.precision(3);
    if (drift.anchors_checked > 0)
      seen << " (before that, the backward y had drifted from the forward checkpoints by up to "
           << drift.max_rel_drift << ", relative, at step " << drift.max_drift_step << ")";
    if (bad[0] > 0.0)
      detail::fail<NumericalError>(
          "backsolve: the backward-reconstructed state y became non-finite (NaN or Inf) at step ",
          k, ", t = ", t, seen.str(),
          "; solving y backwards in time is unstable for dissipative or chaotic systems: set "
          "BacksolveOptions::reanchor (with a short anchor_interval), shorten the horizon, or use "
          "the exact discrete adjoint");
    if (bad[1] > 0.0)
      detail::fail<NumericalError>(
          "backsolve: the adjoint state a became non-finite (NaN or Inf) at step ", k, ", t = ", t,
          seen.str(), "; sensitivities overflow, as in chaotic systems over long horizons");
    detail::fail<NumericalError>(
        "backsolve: the parameter gradient g became non-finite (NaN or Inf) at step ", k,
        ", t = ", t, seen.str());
  }

  std::string describe_schedule(Index interval) const {
    std::ostringstream out;
    out << "backsolve (anchors every " << interval;
    if (options_.reanchor) out << ", re-anchored";
    if (options_.observe_backward_states) out << ", observations at backward states";
    out << ")";
    return out.str();
  }

  Stepper& stepper_;
  Objective<Backend> objective_;
  BacksolveOptions options_;
};

}  // namespace rwd
