// rewind/integrators/explicit_runge_kutta.hpp — one explicit Runge–Kutta engine for every
// tableau, with its exact discrete adjoint.
//
//   rwd::Lorenz63<> model;
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 1000));
//   rwd::Carry carry = stepper.initial_carry(y, theta);
//   while (!stepper.finished(carry)) stepper.step(y, carry, theta);
//
// Forward step (s stages, A strictly lower triangular):
//   Y_i = y_n + h Σ_{j<i} a_ij k_j,   k_i = f(t_n + c_i h, Y_i, θ),   y_{n+1} = y_n + h Σ_i b_i
//   k_i.
// Adjoint step, the exact derivative of that map (reverse mode through the stages): given
// λ_{n+1} = ∂J/∂y_{n+1}, for i = s..1
//   κ_i = h (b_i λ_{n+1} + Σ_{j>i} a_ji ν_j),   (ν_i, μ_i) = ((∂f/∂y)ᵀ κ_i, (∂f/∂θ)ᵀ κ_i) at Y_i,
// then λ_n = λ_{n+1} + Σ_i ν_i and dJ/dθ += Σ_i μ_i (Hager 2000; Sandu 2006). The adjoint step
// first re-runs the forward step from (y_n, carry_n) to rebuild the stages — the "each reverse
// step re-runs its forward step" convention of the revolve literature — so it needs nothing
// but the stored state and carry.
//
// Stage values: step_keeping_stages() takes a step and hands out its stage values Y_1 = y_n,
// Y_2, …, Y_s (stage_count() state-sized vectors); adjoint_step_from_stages() reverses that step
// from them without re-running it — the same operations on the same bits as adjoint_step(), whose
// replay rebuilds exactly these stage values. With fixed or prescribed steps the step size follows
// from the carry; with adaptive steps one more vector keeps the accepted size (the carry holds
// only the size the step tried first), so no attempt is re-run either.
//
// Adaptive runs: the accepted step sizes are treated as constants of the discrete map. The
// gradient is then exact for the sequence of steps the forward run took, not a derivative of
// the step-size controller (which is piecewise constant in y and θ almost everywhere).
//
// Determinism: the stages, the controller and the final combination run the same floating-point
// operations in the same order every time, so (y_n, carry_n) → y_{n+1} is bitwise reproducible
// on a deterministic backend; replays from snapshots depend on it.
//
// Problems defined step by step: a problem with `void begin_step(Index step) const` is told the
// index n of every step before any of that step's right-hand sides or VJPs is evaluated —
// forward, replayed or reversed, in whatever order a schedule visits the steps. Its right-hand
// side may then depend on n as well as on t: a control or forcing held constant over each step,
// or a field rescaled per step (rwd::nn::NeuralOde's step rates). The stage times alone cannot
// say this: the last stage of step n (c = 1) and the first of step n + 1 share a time.
// rwd::StochasticStepper tells it too; rwd::BacksolveAdjoint refuses such a problem (unless its
// `bool depends_on_step() const` says false), since its backward solve takes steps of its own.
//
// Allocation: every work vector is allocated in the constructor; step() and adjoint_step() do
// not allocate (tests/adjoint/no_allocation_test.cpp counts operator new calls).
//
// Capabilities (rewind/integrators/stepper_concepts.hpp): TimeStepper, StageKeepingStepper
// (fixed or prescribed steps), LastStepShorteningStepper, TimeLandingStepper,
// HeldTermsDroppingStepper, ButcherTableauStepper.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <utility>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stop_time_landing.hpp"
#include "rewind/problem.hpp"

namespace rwd {

// Work counts since construction (or reset_counters()).
struct StepperCounters {
  Index rhs_evaluations = 0;    // calls of f
  Index vjp_evaluations = 0;    // calls of the vector-Jacobian product
  Index steps = 0;              // accepted forward steps taken by step()
  Index adjoint_steps = 0;      // adjoint_step() calls
  Index rejected_attempts = 0;  // rejected trial steps (adaptive), forward and recomputed
};

template <Problem P>
class ExplicitRungeKutta {
 public:
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // Validates the tableau and the step control; adaptive control needs an embedded pair.
  ExplicitRungeKutta(const P& problem, ButcherTableau tableau, StepControl control)
      : problem_(problem), tableau_(std::move(tableau)), control_(control) {
    tableau_.validate();
    control_.validate();
    if (control_.is_adaptive() && !tableau_.has_embedded())
      detail::fail<InvalidArgument>("method '", tableau_.name,
                                    "' has no embedded error estimate, so it cannot take adaptive "
                                    "steps; use bs3, dopri5, tsit5 or heun, or fixed steps");
    if (tableau_.stages + 1 > kMaxCombinationTerms)
      detail::fail<InvalidArgument>("method '", tableau_.name, "' has ", tableau_.stages,
                                    " stages; at most ", kMaxCombinationTerms - 1,
                                    " are supported");
    n_ = static_cast<Index>(problem_.state_size());
    p_ = static_cast<Index>(problem_.parameter_size());
    if (n_ < 1) detail::fail<InvalidArgument>("problem state_size = ", n_, " must be >= 1");
    if (p_ < 0) detail::fail<InvalidArgument>("problem parameter_size = ", p_, " must be >= 0");
    plan_stages();
    const int s = tableau_.stages;
    for (int i = 0; i < s; ++i) k_.push_back(B::zeros(n_));
    for (int i = 0; i < s; ++i) nu_.push_back(B::zeros(adjoint_needed_[i] ? n_ : 0));
    // Stage states Y_i (Y_0 is y itself): kept so the adjoint reuses its replay's stages.
    for (int i = 0; i < s; ++i) stages_.push_back(B::zeros(i > 0 ? n_ : 0));
    stage_ = B::zeros(n_);
    kappa_ = B::zeros(n_);
    mu_stage_ = B::zeros(p_);
    if (control_.is_adaptive()) y_new_ = B::zeros(n_);
    const int q = std::min(tableau_.order,
                           tableau_.embedded_order > 0 ? tableau_.embedded_order : tableau_.order);
    controller_ = PiController::for_order(q);
  }

  const P& problem() const { return problem_; }
  const ButcherTableau& tableau() const { return tableau_; }
  const StepControl& control() const { return control_; }
  Index state_size() const { return n_; }
  Index parameter_size() const { return p_; }
  // Fixed steps: the number of steps; adaptive: unknown before the run (−1).
  Index planned_steps() const { return control_.is_adaptive() ? -1 : control_.steps; }

  // The size of the step most recently taken by step() or re-run by adjoint_step().
  double last_step_size() const { return next_h_; }

  const StepperCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }

  // The carry of the initial state. Adaptive runs with dt = 0 choose the first step here
  // (two right-hand side evaluations), deterministically.
  Carry initial_carry(const Vector& y0, const Vector& theta) {
    check_sizes(y0, theta);
    Carry c;
    c.t = control_.t0;
    c.step = 0;
    c.error_prev = 1.0;
    c.h = control_.is_prescribed() ? control_.step_sizes.front() : control_.dt;
    if (control_.is_adaptive() && control_.dt == 0.0) c.h = starting_step(y0, theta);
    return c;
  }

  // Whether every run of this stepper has a state at exactly time t: t0, and with adaptive
  // steps t_final and the stop times (observations at times need this; rewind/objective.hpp).
  bool lands_on(double t) const { return detail::run_lands_on(control_, t); }

  bool finished(const Carry& c) const {
    return control_.is_adaptive() ? !(c.t < control_.t_final) : c.step >= control_.steps;
  }

  // One accepted step: y ← y_{n+1}, carry ← carry_{n+1}. Throws SolverError when an adaptive
  // step cannot be taken (step size underflow, too many rejections, max_steps reached).
  void step(Vector& y, Carry& carry, const Vector& theta) {
    if (finished(carry))
      detail::fail<InvalidArgument>("step() called at step ", carry.step, " (t = ", carry.t,
                                    ") after the end of the run");
    const Carry next = advance_stages(y, carry, theta);
    if (control_.is_adaptive()) {
      B::copy(y_new_, y);
    } else {
      combine_solution(y, y, next_h_);  // in place: y ← y + h Σ b_i k_i
    }
    carry = next;
    ++counters_.steps;
  }

  // One step of exactly size h > 0 from (y, carry), whatever the step control says (the last
  // step of a run that ends at an event inside a step): y ← Φ_h(y), carry.t ← t + h, the step
  // index + 1; the controller's memory is kept. The stages are those of an ordinary step.
  void step_sized(Vector& y, Carry& carry, const Vector& theta, double h) {
    check_sizes(y, theta);
    require_step_size(h, carry);
    begin_step(carry.step);
    evaluate_stages(y, carry.t, h, theta, 0, /*adjoint_replay=*/false);
    next_h_ = h;
    combine_solution(y, y, h);
    carry.t += h;
    ++carry.step;
    ++counters_.steps;
  }

  // Whether adjoint_step_sized can give dJ/dh: the problem is autonomous (P::autonomous), or it
  // gives v·∂f/∂t through `double vjp_time(t, y, theta, v) const`.
  static constexpr bool differentiates_step_size() {
    if constexpr (requires(const P& p, const Vector& v) {
                    { p.vjp_time(0.0, v, v, v) } -> std::convertible_to<double>;
                  })
      return true;
    else if constexpr (requires { P::autonomous; })
      return P::autonomous;
    else
      return false;
  }

  // The adjoint of step_sized(h): λ and μ as adjoint_step, and the return value dJ/dh =
  // λ_{n+1}·∂Φ_h/∂h. With K_i = h f(t + c_i h, Y_i) and κ_i = h W_i (W_i the adjoint of K_i),
  // ∂K_i/∂h = k_i + h c_i ∂f/∂t, so dJ/dh = Σ_i κ_i·k_i / h + Σ_i c_i κ_i·∂f/∂t(Y_i).
  double adjoint_step_sized(const Vector& y_n, const Carry& carry_n, const Vector& theta, double h,
                            Vector& lambda, Vector& mu) {
    static_assert(differentiates_step_size(),
                  "dJ/dh needs an autonomous problem (static constexpr bool autonomous = true) "
                  "or one with vjp_time(t, y, theta, v) = v·df/dt");
    check_sizes(y_n, theta);
    check_adjoint_sizes(lambda, mu);
    require_step_size(h, carry_n);
    begin_step(carry_n.step);
    evaluate_stages(y_n, carry_n.t, h, theta, 0, /*adjoint_replay=*/false);
    next_h_ = h;
    double dj_dh = 0.0;
    reverse_stages(y_n, carry_n.t, h, theta, lambda, mu, &dj_dh);
    return dj_dh;
  }

  // Forgets the parameter-gradient terms a problem holds back until the end of a step (see
  // vjp_accumulate below) when a reverse sweep is abandoned between a step's stages by an error,
  // so that none of them reaches the next run's μ. Nothing for other problems.
  void drop_held_parameter_terms() {
    if constexpr (requires(const P& p) { p.drop_held_vjp_terms(); }) problem_.drop_held_vjp_terms();
  }

  // Vectors a step keeps: its stage values Y_1 = y_n, …, Y_s, and with adaptive steps one more
  // holding the accepted step size in every entry.
  int stage_count() const { return tableau_.stages + (control_.is_adaptive() ? 1 : 0); }

  // step(), also writing the step's stage values into stages[0 .. s) (each of the state's size),
  // and with adaptive steps its accepted size into stages[s].
  void step_keeping_stages(Vector& y, Carry& carry, const Vector& theta, std::span<Vector> stages) {
    require_stage_vectors(stages.size(), "step_keeping_stages");
    for (const Vector& v : stages)
      if (B::size(v) != n_)
        detail::fail<InvalidArgument>("step_keeping_stages: a stage vector has ", B::size(v),
                                      " components; the problem has ", n_);
    step_keeping_stage_values(y, carry, theta, stages.first(tableau_.stages));
    if (control_.is_adaptive()) B::fill(stages[tableau_.stages], next_h_);
  }

  // 2^17 values (1 MiB): a step's dozen vectors then still fit in a server's L2 or L3 cache.
  static constexpr Index kCopiedStagesMaxSize = Index{1} << 17;

  // The adjoint of the step from carry_n whose stage values step_keeping_stages() gave: λ and μ
  // as adjoint_step(), bit for bit, with no forward step re-run.
  void adjoint_step_from_stages(std::span<const Vector> stages, const Carry& carry_n,
                                const Vector& theta, Vector& lambda, Vector& mu) {
    require_stage_vectors(stages.size(), "adjoint_step_from_stages");
    check_sizes(stages[0], theta);
    check_adjoint_sizes(lambda, mu);
    if (control_.is_adaptive())
      next_h_ = B::max_norm(stages[tableau_.stages]);  // every entry holds the size (> 0)
    else
      next_h_ = control_.is_prescribed()
                    ? control_.step_sizes[static_cast<std::size_t>(carry_n.step)]
                    : control_.dt;
    begin_step(carry_n.step);
    reverse_stages(stages[0], carry_n.t, next_h_, theta, lambda, mu, nullptr, stages.data());
  }

  // λ ← λ_n = (∂y_{n+1}/∂y_n)ᵀ λ_{n+1};  mu ← mu + (∂y_{n+1}/∂θ)ᵀ λ_{n+1}.
  // y_n and carry_n are the state and carry at the start of the step being reversed.
  void adjoint_step(const Vector& y_n, const Carry& carry_n, const Vector& theta, Vector& lambda,
                    Vector& mu) {
    check_sizes(y_n, theta);
    check_adjoint_sizes(lambda, mu);
    advance_stages(y_n, carry_n, theta, /*adjoint_replay=*/true);
    reverse_stages(y_n, carry_n.t, next_h_, theta, lambda, mu, nullptr);
  }

 private:
  // step(), also writing the step's stage values into stages (s of them).
  void step_keeping_stage_values(Vector& y, Carry& carry, const Vector& theta,
                                 std::span<Vector> stages) {
    // Two ways to the same bits, chosen by the state's size (measured with the store-all-stages
    // gradients of bench/gradient_cost_bench, bench/results/gradient_cost.md):
    // - up to kCopiedStagesMaxSize values the step runs on the stepper's own vectors, which stay
    //   in the cache for its right-hand sides, and the stage values are then copied out with
    //   streaming stores (copy_streaming<B>), which do not read the caller's vectors into the
    //   cache first: the forward sweep at 10^4 Gray–Scott unknowns 54 → 43 ms;
    // - above it a step's vectors do not fit in the cache anyway, and the extra read of every
    //   stage cost more than it saved (10^6 unknowns: 110–115 → 126–129 ms); the step builds its
    //   stage states straight into the caller's vectors, which stand in for stages_ while it
    //   runs (swapped in and back out: O(1), the same buffers).
    if (n_ <= kCopiedStagesMaxSize) {
      copy_streaming<B>(y, stages[0]);
      step(y, carry, theta);
      for (std::size_t i = 1; i < stages.size(); ++i) copy_streaming<B>(stages_[i], stages[i]);
      return;
    }
    B::copy(y, stages[0]);
    struct SwapBack {
      std::vector<Vector>& own;
      std::span<Vector> given;
      void swap_all() {
        for (std::size_t i = 1; i < given.size(); ++i) std::swap(own[i], given[i]);
      }
      ~SwapBack() { swap_all(); }
    } swapped{stages_, stages};
    swapped.swap_all();
    step(y, carry, theta);
  }

  void require_stage_vectors(std::size_t given, const char* what) const {
    if (given != static_cast<std::size_t>(stage_count()))
      detail::fail<InvalidArgument>(what, ": ", given, " stage vectors for method '", tableau_.name,
                                    "', which keeps ", stage_count(), " (", tableau_.stages,
                                    " stages", control_.is_adaptive() ? ", then the step size" : "",
                                    ")");
  }

  // The reverse pass through the stages left by the forward pass of the step (t, h): λ, μ, and
  // with dj_dh the derivative with respect to h (every stage in k_ must then be evaluated). The
  // stage values are stages_ (Y_1 = y_n), or `given` (s vectors, given[0] = y_n) when not null.
  void reverse_stages(const Vector& y_n, double t, double h, const Vector& theta, Vector& lambda,
                      Vector& mu, double* dj_dh, const Vector* given = nullptr) {
    const int s = tableau_.stages;
    std::array<double, kMaxCombinationTerms> coeff{};
    std::array<const Vector*, kMaxCombinationTerms> vecs{};
    for (int i = s - 1; i >= 0; --i) {
      if (!adjoint_needed_[i]) continue;
      int m = 0;
      for (int j = i + 1; j < s; ++j) {
        if (!adjoint_needed_[j] || tableau_.a_at(j, i) == 0.0) continue;
        coeff[m] = h * tableau_.a_at(j, i);
        vecs[m] = &nu_[j];
        ++m;
      }
      B::linear_combination(kappa_, h * tableau_.b[i], lambda, {coeff.data(), std::size_t(m)},
                            {vecs.data(), std::size_t(m)});
      const Vector& Yi = i == 0 ? y_n : given ? given[i] : stages_[i];
      if (dj_dh) {
        *dj_dh += B::dot(kappa_, k_[i]) / h;
        if constexpr (requires(const P& p) {
                        { p.vjp_time(t, Yi, theta, kappa_) } -> std::convertible_to<double>;
                      })
          *dj_dh += tableau_.c[i] * problem_.vjp_time(t + tableau_.c[i] * h, Yi, theta, kappa_);
      }
      // A problem that can add its parameter part into μ itself (the same bits as into a buffer
      // and then μ += buffer) saves the buffer's pass: rwd::nn::NeuralOde's per-sample
      // gradients are B copies of θ long. It may let the additions wait until the step's stages
      // are done (finish_vjp_accumulation below).
      if constexpr (requires(const P& p) { p.vjp_accumulate(t, Yi, theta, kappa_, nu_[i], mu); }) {
        problem_.vjp_accumulate(t + tableau_.c[i] * h, Yi, theta, kappa_, nu_[i], mu);
      } else {
        problem_.vjp(t + tableau_.c[i] * h, Yi, theta, kappa_, nu_[i], mu_stage_);
        if (p_ > 0) B::axpy(1.0, mu_stage_, mu);
      }
      ++counters_.vjp_evaluations;
    }
    // A problem whose additions into μ may wait (see vjp_accumulate) completes them here.
    if constexpr (requires(const P& p) { p.finish_vjp_accumulation(mu); })
      problem_.finish_vjp_accumulation(mu);
    int m = 0;
    for (int i = 0; i < s; ++i) {
      if (!adjoint_needed_[i]) continue;
      coeff[m] = 1.0;
      vecs[m] = &nu_[i];
      ++m;
    }
    B::linear_combination(lambda, 1.0, lambda, {coeff.data(), std::size_t(m)},
                          {vecs.data(), std::size_t(m)});
    ++counters_.adjoint_steps;
  }

  // Tells a problem defined step by step which step its next evaluations belong to (above).
  void begin_step(Index step) const {
    if constexpr (requires(const P& p) { p.begin_step(step); }) problem_.begin_step(step);
  }

  void check_adjoint_sizes(const Vector& lambda, const Vector& mu) const {
    if (B::size(lambda) != n_ || B::size(mu) != p_)
      detail::fail<InvalidArgument>("adjoint vectors have sizes (", B::size(lambda), ", ",
                                    B::size(mu), "); expected (", n_, ", ", p_, ")");
  }

  void require_step_size(double h, const Carry& carry) const {
    if (!(h > 0.0) || !std::isfinite(h))
      detail::fail<InvalidArgument>("step ", carry.step, " at t = ", carry.t, ": step size ", h,
                                    " must be finite and > 0");
  }

  // Which stages are evaluated: a stage matters if its weight is non-zero or a stage that
  // matters reads it. Fixed steps need the stages behind b; adaptive ones also those behind the
  // error weights. The adjoint needs exactly the stages behind b.
  void plan_stages() {
    const int s = tableau_.stages;
    auto closure = [&](const std::vector<double>& w1, const std::vector<double>* w2) {
      std::vector<bool> need(static_cast<std::size_t>(s), false);
      for (int i = s - 1; i >= 0; --i) {
        bool n = w1[i] != 0.0 || (w2 && (*w2)[i] != 0.0);
        for (int j = i + 1; j < s && !n; ++j) n = need[j] && tableau_.a_at(j, i) != 0.0;
        need[i] = n;
      }
      return need;
    };
    adjoint_needed_ = closure(tableau_.b, nullptr);
    // A fixed-step adjoint replay needs the stage states of the stages it differentiates, and so
    // the right-hand sides those states read — not the ones that only feed y_{n+1} (RK4's k_4).
    replay_evaluated_.assign(static_cast<std::size_t>(s), false);
    for (int j = 0; j < s; ++j)
      for (int i = j + 1; i < s; ++i)
        if (adjoint_needed_[i] && tableau_.a_at(i, j) != 0.0) replay_evaluated_[j] = true;
    if (tableau_.has_embedded()) {
      error_weights_.resize(static_cast<std::size_t>(s));
      for (int i = 0; i < s; ++i) error_weights_[i] = tableau_.b[i] - tableau_.b_embedded[i];
    }
    forward_needed_ =
        control_.is_adaptive() ? closure(tableau_.b, &error_weights_) : adjoint_needed_;
  }

  void check_sizes(const Vector& y, const Vector& theta) const {
    if (B::size(y) != n_)
      detail::fail<InvalidArgument>("state has ", B::size(y), " components; the problem has ", n_);
    if (B::size(theta) != p_)
      detail::fail<InvalidArgument>("parameter vector has ", B::size(theta),
                                    " components; the problem has ", p_);
  }

  // Y_i = y + h Σ_{j<i} a_ij k_j into stages_[i] (stage 0 is y itself). Returns Y_i.
  const Vector& stage_state(int i, const Vector& y, double h) {
    if (i == 0) return y;
    Vector& out = stages_[i];
    std::array<double, kMaxCombinationTerms> coeff{};
    std::array<const Vector*, kMaxCombinationTerms> vecs{};
    int m = 0;
    for (int j = 0; j < i; ++j) {
      if (tableau_.a_at(i, j) == 0.0) continue;
      coeff[m] = h * tableau_.a_at(i, j);
      vecs[m] = &k_[j];
      ++m;
    }
    B::linear_combination(out, 1.0, y, {coeff.data(), std::size_t(m)},
                          {vecs.data(), std::size_t(m)});
    return out;
  }

  // Builds the stage states and evaluates the right-hand sides a step needs. A fixed-step
  // adjoint replay builds the states the adjoint differentiates and evaluates only the right-hand
  // sides they read; everything else evaluates every stage that the step's weights need.
  void evaluate_stages(const Vector& y, double t, double h, const Vector& theta, int first,
                       bool adjoint_replay) {
    const bool partial = adjoint_replay && !control_.is_adaptive();
    for (int i = first; i < tableau_.stages; ++i) {
      const bool state = partial ? adjoint_needed_[i] : forward_needed_[i];
      if (!state) continue;
      const Vector& Yi = stage_state(i, y, h);
      if (partial && !replay_evaluated_[i]) continue;
      problem_.rhs(t + tableau_.c[i] * h, Yi, theta, k_[i]);
      ++counters_.rhs_evaluations;
    }
  }

  // out = y + h Σ_i w_i k_i over the stages with non-zero weight (out may be y).
  void combine(Vector& out, const Vector& y, double h, const std::vector<double>& w, double base) {
    std::array<double, kMaxCombinationTerms> coeff{};
    std::array<const Vector*, kMaxCombinationTerms> vecs{};
    int m = 0;
    for (int i = 0; i < tableau_.stages; ++i) {
      if (w[i] == 0.0) continue;
      coeff[m] = h * w[i];
      vecs[m] = &k_[i];
      ++m;
    }
    B::linear_combination(out, base, y, {coeff.data(), std::size_t(m)},
                          {vecs.data(), std::size_t(m)});
  }
  void combine_solution(Vector& out, const Vector& y, double h) {
    combine(out, y, h, tableau_.b, 1.0);
  }

  // Runs the stages of the step starting at (y, carry), including any rejected attempts, and
  // leaves the accepted step's stages in k_, its size in next_h_ and (adaptive) y_{n+1} in
  // y_new_. Returns carry_{n+1}. Never modifies y.
  Carry advance_stages(const Vector& y, const Carry& carry, const Vector& theta,
                       bool adjoint_replay = false) {
    Carry next = carry;
    next.step = carry.step + 1;
    begin_step(carry.step);
    if (control_.is_prescribed()) {
      next_h_ = control_.step_sizes[static_cast<std::size_t>(carry.step)];
      evaluate_stages(y, carry.t, next_h_, theta, 0, adjoint_replay);
      next.t = carry.t + next_h_;
      return next;
    }
    if (!control_.is_adaptive()) {
      next_h_ = control_.dt;
      evaluate_stages(y, carry.t, next_h_, theta, 0, adjoint_replay);
      // t_n = t0 + n·dt rather than a running sum, so long runs do not accumulate round-off.
      next.t = control_.t0 + static_cast<double>(next.step) * control_.dt;
      return next;
    }
    if (carry.step >= control_.max_steps)
      detail::fail<SolverError>("adaptive run reached max_steps = ", control_.max_steps,
                                " at t = ", carry.t, " before t_final = ", control_.t_final);
    const double t = carry.t;
    const double t_final = control_.t_final;
    const double h_min =
        control_.min_step_relative * std::max(std::abs(t), std::abs(t_final - control_.t0));
    // The time this step must not pass (the next stop time after t, else the end of the run),
    // and the attempts cut or stretched to end on it (rewind/integrators/stop_time_landing.hpp;
    // a stretched attempt's error is checked like any other, a rejection shrinks it as usual).
    detail::StepLanding landing(control_, t, h_min);
    double h = carry.h;
    int rejections = 0;
    bool first_stage_done = false;
    for (;;) {
      h = landing.attempt_size(h, rejections);
      // The first stage depends only on (t, y): evaluated once however many attempts follow.
      evaluate_stages(y, t, h, theta, first_stage_done ? 1 : 0, adjoint_replay);
      first_stage_done = true;
      combine_solution(y_new_, y, h);
      combine(stage_, y, h, error_weights_, 0.0);  // error estimate h Σ (b_i − b̂_i) k_i
      const double err = B::error_norm(stage_, y, y_new_, control_.rtol, control_.atol);
      if (err <= 1.0) {
        const double factor =
            controller_.accepted_factor(control_, err, carry.error_prev, rejections > 0);
        next_h_ = h;
        // Landing on a stop time shortened a step the controller had accepted in advance: the
        // next step may try that size again.
        next.h = landing.next_proposal(h * factor, carry.h, rejections);
        next.error_prev = std::max(err, 1e-4);
        next.t = landing.end_time(h);
        next.rejected = carry.rejected + rejections;
        return next;
      }
      ++rejections;
      ++counters_.rejected_attempts;
      if (rejections > control_.max_rejections)
        detail::fail<SolverError>("step ", carry.step, " at t = ", t, ": ", rejections,
                                  " consecutive rejected steps (last error norm ", err,
                                  std::isfinite(err) ? "" : ", non-finite stage values",
                                  "); the problem may be stiff or the tolerances too tight");
      h *= controller_.rejected_factor(control_, err);
      if (h < h_min)
        detail::fail<SolverError>("step size underflow at step ", carry.step, ", t = ", t,
                                  ": h = ", h, " < ", h_min, " (last error norm ", err, ")");
    }
  }

  // Hairer, Nørsett & Wanner, Solving ODEs I, §II.4: a first step from the sizes of y0, f(y0)
  // and an estimate of the second derivative, in the error norm of the run.
  double starting_step(const Vector& y0, const Vector& theta) {
    const double rtol = control_.rtol, atol = control_.atol;
    begin_step(0);
    problem_.rhs(control_.t0, y0, theta, k_[0]);
    ++counters_.rhs_evaluations;
    const double d0 = B::error_norm(y0, y0, y0, rtol, atol);
    const double d1 = B::error_norm(k_[0], y0, y0, rtol, atol);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::min(h0, control_.t_final - control_.t0);
    const double c1[] = {h0};
    const Vector* v1[] = {&k_[0]};
    B::linear_combination(stage_, 1.0, y0, c1, v1);  // explicit Euler step
    problem_.rhs(control_.t0 + h0, stage_, theta, k_[1 % tableau_.stages]);
    ++counters_.rhs_evaluations;
    const double c2[] = {1.0, -1.0};
    const Vector* v2[] = {&k_[1 % tableau_.stages], &k_[0]};
    B::linear_combination(stage_, c2, v2);
    const double d2 = B::error_norm(stage_, y0, y0, rtol, atol) / h0;
    const int q = tableau_.order;
    const double h1 = std::max(d1, d2) <= 1e-15 ? std::max(1e-6, h0 * 1e-3)
                                                : std::pow(0.01 / std::max(d1, d2), 1.0 / (q + 1));
    double h = std::min(100 * h0, h1);
    if (!std::isfinite(h) || h <= 0.0)
      detail::fail<SolverError>("could not choose a starting step at t0 = ", control_.t0,
                                " (non-finite f(y0)?); give StepControl::dt explicitly");
    return std::min(h, control_.t_final - control_.t0);
  }

  const P& problem_;
  ButcherTableau tableau_;
  StepControl control_;
  Index n_ = 0, p_ = 0;
  std::vector<bool> forward_needed_, adjoint_needed_, replay_evaluated_;
  std::vector<double> error_weights_;
  std::vector<Vector> k_, nu_, stages_;
  Vector stage_, kappa_, mu_stage_, y_new_;
  double next_h_ = 0.0;
  PiController controller_;
  StepperCounters counters_;
};

}  // namespace rwd
