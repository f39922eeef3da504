// rewind/adjoint/backsolve_adjoint.hpp — the continuous "backsolve" adjoint, next to the exact
// discrete one, for comparison and for the memory-light use many neural-ODE libraries default to.
//
//   rwd::BacksolveOptions options;
//   options.reanchor = true;                                   // reset y to the checkpoints
//   rwd::BacksolveAdjoint driver(stepper, objective, options);
//   auto result = driver.run(y0, theta);                       // .loss, .grad_y0, .grad_theta
//   result.drift.max_rel_drift;                                // backward y against the checkpoints
//
// Method (the classical continuous adjoint, e.g. Cao, Li, Petzold & Serban 2003; the neural-ODE
// "adjoint method" of Chen, Rubanova, Bettencourt & Duvenaud 2018). The forward sweep runs the
// user's stepper and keeps the state at every `anchor_interval`-th step. Then the augmented system
//
//   dy/dt = f(t, y, θ),   da/dt = −(∂f/∂y)ᵀ a,   dg/dt = −(∂f/∂θ)ᵀ a,
//
// is integrated backwards from t_N (a = ∂J/∂y_N, g = 0) to t_0 with the same tableau and step
// size, as an ordinary forward integration in reversed time τ = t_N − t (BacksolveSystem), so the
// existing ExplicitRungeKutta steps it unchanged. Each observation term adds its gradient to a at
// its step (evaluated at the forward sweep's state, as autograd frameworks do with the outputs of
// their forward solve). At the end dJ/dy0 = a(t_0) and dJ/dθ = g(t_0).
//
// This is the gradient of the ODE solution, not of the computed numbers: it differs from the
// exact discrete adjoint (rwd::CheckpointedAdjoint) by the integrator's error in both solves, and
// because y is recomputed backwards — an unstable direction for dissipative or chaotic systems —
// the backward y drifts from the forward one. The drift is measured at every checkpoint
// (‖y_back − y_fwd‖ / ‖y_fwd‖, contract 4 of the design) and, with `reanchor`, y is reset to the
// checkpoint there, which bounds it (the gradient error then stems from the discretisation alone).
//
// Scope: fixed steps (adaptive or prescribed step control is refused), the Eigen backend.
// Memory: N / anchor_interval states + the observation gradients + 2n + p for the augmented state.
#pragma once

#include <chrono>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/objective.hpp"
#include "rewind/problem.hpp"

namespace rwd {

// The augmented adjoint system in reversed time τ = t_end − t, z = (y, a, g), as a Problem:
// dz/dτ = (−f, (∂f/∂y)ᵀa, (∂f/∂θ)ᵀa) at t = t_end − τ. Only its right-hand side is ever needed
// (it is integrated, never differentiated); its vjp would need second derivatives of f and
// refuses to run.
template <Problem P>
class BacksolveSystem {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static_assert(std::is_same_v<typename P::Backend, EigenBackend>, "backsolve runs on the Eigen backend");

  BacksolveSystem(const P& problem, double t_end)
      : problem_(problem), t_end_(t_end), n_(problem.state_size()), p_(problem.parameter_size()),
        y_(n_), a_(n_), f_(n_), out_y_(n_), out_theta_(p_) {}

  Index state_size() const { return 2 * n_ + p_; }
  Index parameter_size() const { return p_; }

  void rhs(double tau, const Vector& z, const Vector& theta, Vector& dz) const {
    const double t = t_end_ - tau;
    y_ = z.segment(0, n_);
    a_ = z.segment(n_, n_);
    problem_.rhs(t, y_, theta, f_);
    problem_.vjp(t, y_, theta, a_, out_y_, out_theta_);
    dz.segment(0, n_) = -f_;
    dz.segment(n_, n_) = out_y_;
    dz.segment(2 * n_, p_) = out_theta_;
  }

  [[noreturn]] void vjp(double, const Vector&, const Vector&, const Vector&, Vector&, Vector&) const {
    detail::fail<InvalidArgument>("the backsolve system is only integrated; differentiating it would need "
                                  "second derivatives of the model");
  }

 private:
  const P& problem_;
  double t_end_;
  Index n_, p_;
  mutable Vector y_, a_, f_, out_y_, out_theta_;
};

struct BacksolveOptions {
  // Keep the forward state every this many steps (0: ⌈√N⌉): where drift is measured and, with
  // reanchor, where y is reset.
  Index anchor_interval = 0;
  // Reset the backward y to the forward checkpoint at every anchor (off: plain backsolve).
  bool reanchor = false;
  bool check_finite = true;  // NaN/Inf in the backward state stops the run, naming step and time
};

// The backward y against the forward checkpoints (measured before any re-anchoring).
struct BacksolveDrift {
  double max_rel_drift = 0.0;  // max ‖y_back − y_fwd‖ / ‖y_fwd‖ over the anchors
  Index max_drift_step = -1;   // where it occurred
  Index anchors_checked = 0;
};

template <class Vector>
struct BacksolveResult : GradientResult<Vector> {
  BacksolveDrift drift;
  Index anchor_interval = 0;
};

template <class Stepper>
class BacksolveAdjoint {
 public:
  using Backend = typename Stepper::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;
  static_assert(std::is_same_v<Backend, EigenBackend>, "backsolve runs on the Eigen backend");

  BacksolveAdjoint(Stepper& stepper, Objective<Backend> objective, BacksolveOptions options = {})
      : stepper_(stepper), objective_(std::move(objective)), options_(options) {
    if (options_.anchor_interval < 0)
      detail::fail<InvalidArgument>("backsolve anchor_interval = ", options_.anchor_interval, " must be >= 0");
  }

  BacksolveResult<Vector> run(const Vector& y0, const Vector& theta) {
    using Clock = std::chrono::steady_clock;
    const StepControl& control = stepper_.control();
    if (control.mode != StepControl::Mode::fixed)
      detail::fail<InvalidArgument>("backsolve needs fixed steps: the backward solve retraces the forward grid");
    const Index n = stepper_.state_size(), p = stepper_.parameter_size(), steps = control.steps;
    detail::require_size<B>(y0, n, "initial state y0");
    detail::require_size<B>(theta, p, "parameter vector theta");
    detail::require_finite_input<B>(y0, "initial state y0");
    detail::require_finite_input<B>(theta, "parameter vector theta");
    if (objective_.last_observation_step() > steps)
      detail::fail<InvalidArgument>("objective observes step ", objective_.last_observation_step(),
                                    " but the run has only ", steps, " steps");
    const Index interval = options_.anchor_interval > 0
                               ? options_.anchor_interval
                               : std::max<Index>(1, static_cast<Index>(std::ceil(std::sqrt(static_cast<double>(steps)))));

    BacksolveResult<Vector> result;
    result.anchor_interval = interval;
    stepper_.reset_counters();

    // Forward sweep: loss, anchors, observation gradients.
    const auto forward_start = Clock::now();
    std::vector<Vector> anchors(static_cast<std::size_t>(steps / interval + 1));
    std::vector<std::pair<Index, Vector>> jumps;  // (step, ∂g_k/∂y at the forward y_k)
    Vector y = y0, grad = B::zeros(n);
    Carry carry = stepper_.initial_carry(y, theta);
    double loss = 0.0;
    auto observe = [&](Index step) {
      if (!objective_.observes(step)) return;
      loss += objective_.observation(step, carry.t, y, grad);
      jumps.emplace_back(step, grad);
    };
    anchors[0] = y;
    observe(0);
    for (Index k = 1; k <= steps; ++k) {
      stepper_.step(y, carry, theta);
      if (options_.check_finite && !y.allFinite())
        detail::fail<NumericalError>("backsolve forward sweep: non-finite state at step ", k, " (t = ", carry.t, ")");
      if (k % interval == 0) anchors[static_cast<std::size_t>(k / interval)] = y;
      observe(k);
    }
    const double t_end = carry.t;
    Vector lambda = B::zeros(n);
    loss += objective_.terminal(t_end, y, lambda);
    result.y_final = y;
    const auto forward_end = Clock::now();

    // Backward: z = (y, a, g) from t_N to t_0.
    BacksolveSystem<typename std::decay_t<decltype(stepper_.problem())>> system(stepper_.problem(), t_end);
    ExplicitRungeKutta backward(system, stepper_.tableau(), StepControl::fixed(0.0, control.dt, steps));
    Vector z = Vector::Zero(2 * n + p);
    z.segment(0, n) = y;
    z.segment(n, n) = lambda;
    auto jump = jumps.rbegin();
    auto apply_jump = [&](Index step) {
      if (jump != jumps.rend() && jump->first == step) {
        z.segment(n, n) += jump->second;
        ++jump;
      }
    };
    apply_jump(steps);
    Carry back = backward.initial_carry(z, theta);
    for (Index k = steps - 1; k >= 0; --k) {
      backward.step(z, back, theta);
      if (options_.check_finite && !z.allFinite())
        detail::fail<NumericalError>("backsolve backward sweep: non-finite adjoint state at step ", k,
                                     " (t = ", t_end - back.t, ")");
      if (k % interval == 0) {
        const Vector& anchor = anchors[static_cast<std::size_t>(k / interval)];
        const double scale = std::max(anchor.norm(), 1e-300);
        const double drift = (z.segment(0, n) - anchor).norm() / scale;
        ++result.drift.anchors_checked;
        if (drift > result.drift.max_rel_drift) {
          result.drift.max_rel_drift = drift;
          result.drift.max_drift_step = k;
        }
        if (options_.reanchor) z.segment(0, n) = anchor;
      }
      apply_jump(k);
    }
    const auto backward_end = Clock::now();

    result.loss = loss;
    result.grad_y0 = z.segment(n, n);
    result.grad_theta = z.segment(2 * n, p);
    Summary& s = result.summary;
    s.method = stepper_.tableau().name + ", fixed dt = " + std::to_string(control.dt);
    s.schedule = "backsolve (anchors every " + std::to_string(interval) + (options_.reanchor ? ", re-anchored)" : ")");
    s.backend = "eigen";
    s.state_size = n;
    s.parameter_size = p;
    s.steps = steps;
    s.forward_steps = steps;
    s.reversed_steps = steps;
    s.rhs_evaluations_forward = stepper_.counters().rhs_evaluations;
    s.rhs_evaluations_reverse = backward.counters().rhs_evaluations;
    s.vjp_evaluations = backward.counters().rhs_evaluations;
    s.stores = static_cast<Index>(anchors.size());
    s.peak_stored_bytes = static_cast<std::int64_t>((anchors.size() + jumps.size()) * static_cast<std::size_t>(n) * sizeof(double));
    s.forward_seconds = std::chrono::duration<double>(forward_end - forward_start).count();
    s.reverse_seconds = std::chrono::duration<double>(backward_end - forward_end).count();
    s.t_final = t_end;
    return result;
  }

 private:
  Stepper& stepper_;
  Objective<Backend> objective_;
  BacksolveOptions options_;
};

}  // namespace rwd
