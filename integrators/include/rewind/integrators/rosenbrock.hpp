// rewind/integrators/rosenbrock.hpp — one engine for the Rosenbrock methods
// (rewind/integrators/rosenbrock_tableau.hpp), for stiff problems, with the exact discrete adjoint
// of the steps it computes.
//
//   rwd::Robertson chemistry;
//   rwd::RosenbrockStepper stepper(chemistry, rwd::RosenbrockTableau::rodas4(),
//                                  rwd::StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10));
//   rwd::StoreAllAdjoint driver(stepper, objective);   // or any checkpointed driver and schedule
//
// Forward step (Hairer & Wanner's transformed form, Solving ODEs II §IV.7), with
// M = I − hγJ, J = ∂f/∂y(t_n, y_n) evaluated and factored (rwd::StageMatrix: dense LU, or
// LAPACK's band LU for a problem that states its band) once per step attempt: for i = 1..s
//   g_i = y_n + Σ_{j<i} a_ij U_j,   F_i = f(t_n + α_i h, g_i),
//   M U_i = q_i,   q_i = hγ F_i + Σ_{j<i} γ c_ij U_j      (that is (I/(hγ) − J) U_i = F_i + Σ
//   c_ij/h U_j),
// then y_{n+1} = y_n + Σ_i m_i U_i. No nonlinear system is solved: the step is an explicit
// function of (y_n, θ), computed with the same operations in the same order every time.
//
// Adjoint step: the exact derivative of that map (to round-off: the transposed solves use the
// same LU factors). The map depends on y_n and θ through the stage arguments and through J, so
// the adjoint needs second derivatives of f. Given λ = λ_{n+1}: Ū_i = m_i λ, then for i = s..1
//   q̄_i = M⁻ᵀ Ū_i,   w_i = hγ q̄_i                             (the adjoint of F_i)
//   Ū_j += γ c_ij q̄_i  (j < i)
//   (ν_i, μ_i) = ((∂f/∂y)ᵀ w_i, (∂f/∂θ)ᵀ w_i) at (t_n + α_i h, g_i)        (the problem's vjp)
//   Ū_j += a_ij ν_i  (j < i)
//   (σ_i, τ_i) = ∇_{(y, θ)} [w_iᵀ J(y, θ) U_i] at (t_n, y_n)               (the problem's jvp_vjp)
// and λ_n = λ + Σ_i (ν_i + σ_i), dJ/dθ += Σ_i (μ_i + τ_i). The last line is the adjoint of J in
// U_i = M⁻¹ q_i: dU_i = hγ M⁻¹ dJ U_i, so ⟨Ū_i, dU_i⟩ = w_iᵀ dJ U_i (the discrete
// Rosenbrock adjoint of Sandu, Daescu & Carmichael, "Direct and adjoint sensitivity analysis of
// chemical kinetic systems with KPP: Part I", Atmos. Environ. 37, 2003, derived again here and
// checked against closed forms and finite differences in
// tests/adjoint/rosenbrock_adjoint_test.cpp). adjoint_step() first re-runs the forward step from
// (y_n, carry_n) — the same operations on the same bits — and reuses its factored M;
// adjoint_step_from_stages() reverses a step from the vectors step_keeping_stages() kept: y_n and
// U_1 … U_s (s + 1 vectors); it evaluates and factors J(y_n) again (no right-hand side, no forward
// step) and recomputes each g_i from them with the forward's operations, so both give the same
// bits.
//
// What the problem must give (refused at construction otherwise, naming the rule):
// - an rwd::Problem on rwd::EigenBackend; J is its `jacobian()` or `band_jacobian()`, or is
//   assembled exactly from vjps (rewind/integrators/stage_matrix.hpp: dense up to 5000 states,
//   band for a problem that states its band);
// - second derivatives: `void jvp_vjp(double t, const Vector& y, const Vector& theta,
//   const Vector& u, const Vector& w, Vector& out_y, Vector& out_theta) const`, overwriting
//   out_y = ∇_y [wᵀ (∂f/∂y)(t, y, θ) u] and out_theta = ∇_θ [wᵀ (∂f/∂y)(t, y, θ) u] (the vjp of
//   the jvp along u; rwd::auto_problem derives it, rwd::Robertson has its own);
// - for the time-derivative term, either autonomy, declared (`static constexpr bool autonomous =
//   true`, or at run time `bool declares_autonomous() const`: a model loaded from a plugin), or
//   ∂f/∂t: `time_derivative(t, y, θ, out)` and `time_derivative_vjp(t, y, θ, w, out_y, out_θ)`
//   (TimeDerivativeProblem below; rwd::auto_problem derives them for a model whose rhs takes t as
//   its scalar type). A problem with neither is refused rather than integrated at a reduced order.
//
// Non-autonomous problems: q_i gains hγ · γ_i h ∂f/∂t(t_n, y_n), with γ_i the tableau's
// gamma_sum — the method applied to the system made autonomous by t' = 1, whose Jacobian has
// ∂f/∂t as its last column (tests/adjoint/rosenbrock_time_test.cpp compares the two). Its adjoint
// adds ∇_{(y, θ)} [ρᵀ ∂f/∂t] at (t_n, y_n), ρ = Σ_i hγ γ_i h q̄_i, to λ_n and dJ/dθ: one
// time_derivative_vjp per reversed step.
//
// Adaptive runs: the embedded error estimate Σ (m_i − m̂_i) U_i in the run's error norm and the
// Runge–Kutta engines' PI controller (rwd::PiController, rewind/integrators/step_control.hpp); a
// singular M rejects the attempt and retries with a quarter of the step. A fixed or prescribed step
// whose M is singular is taken as 2, 4, … equal substeps, the first count all of whose matrices
// factor, up to max_substeps (rewind/integrators/held_step_substeps.hpp; its adjoint reverses the
// substeps, and a stage-keeping schedule keeps y_n and a marker for it); past that the run stops
// with rwd::SolverError naming the step and the time. Accepted step sizes are constants of
// the discrete map. Stop times (StepControl::stop_times) are landed on exactly, by the Runge–Kutta
// engines' rule (rewind/integrators/stop_time_landing.hpp): a step is cut, or its first attempt
// stretched, to end on the next one, the carry's t is that time itself, and the step's adjoint
// uses the size the step took — replayed from (y_n, carry_n), or kept with its vectors.
//
// Capabilities (rewind/integrators/stepper_concepts.hpp): TimeStepper, SelfDescribingStepper,
// StageKeepingStepper (fixed, prescribed or adaptive steps), TimeLandingStepper (adaptive
// steps: t_final and the stop times).
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/adaptive_attempts.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/held_step_substeps.hpp"
#include "rewind/integrators/rosenbrock_tableau.hpp"
#include "rewind/integrators/stage_matrix.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stop_time_landing.hpp"
#include "rewind/problem.hpp"

namespace rwd {

// A problem that gives the second derivatives a Rosenbrock adjoint needs: out_y and out_theta
// (overwritten) are the gradients with respect to y and θ of wᵀ (∂f/∂y)(t, y, θ) u.
template <class P>
concept SecondDerivativeProblem = ImplicitEngineProblem<P> &&
    requires(const P& p, double t, const Eigen::VectorXd& v, Eigen::VectorXd& out) {
  p.jvp_vjp(t, v, v, v, v, out, out);
};

// A problem that declares `static constexpr bool autonomous = true` (f does not depend on t).
template <class P>
concept DeclaredAutonomousProblem = requires {
  requires static_cast<bool>(P::autonomous);
};

// A problem that says at run time whether it is autonomous (a model loaded from a plugin,
// rwd::PluginModel: its declaration is known when the library is loaded).
template <class P>
concept RuntimeAutonomyProblem = requires(const P& p) {
  { p.declares_autonomous() } -> std::convertible_to<bool>;
};

// A problem that says at run time whether it gives ∂f/∂t (a model loaded from a plugin,
// rwd::PluginModel: whether its rhs takes t as its scalar type is known when it is loaded).
template <class P>
concept RuntimeTimeDerivativeProblem = requires(const P& p) {
  { p.has_time_derivative() } -> std::convertible_to<bool>;
};

// A problem that gives ∂f/∂t and the second derivatives of its time-derivative term:
// time_derivative(t, y, θ, out) overwrites out = ∂f/∂t, time_derivative_vjp(t, y, θ, w, out_y,
// out_θ) overwrites the gradients in y and θ of wᵀ ∂f/∂t (rwd::auto_problem derives both for a
// model whose rhs takes t as its scalar type). A problem that also says at run time whether it
// has them (`bool has_time_derivative() const`: a model loaded from a plugin) is asked.
template <class P>
concept TimeDerivativeProblem = ImplicitEngineProblem<P> &&
    requires(const P& p, double t, const Eigen::VectorXd& v, Eigen::VectorXd& out) {
  p.time_derivative(t, v, v, out);
  p.time_derivative_vjp(t, v, v, v, out, out);
};

// Work of the linear algebra since construction (or reset_counters()).
struct RosenbrockCounters {
  Index jacobian_evaluations = 0;           // one per step attempt, one per reversed kept step
  Index factorizations = 0;                 // LU factorisations of I − hγJ
  Index second_derivative_evaluations = 0;  // jvp_vjp calls, s per reversed step
  // Non-autonomous problems: ∂f/∂t, one per step attempt, and its vjp, one per reversed step.
  Index time_derivative_evaluations = 0;
  Index substepped_steps = 0;  // fixed steps taken as substeps (a singular M whole), replays too
};

template <ImplicitEngineProblem P>
class RosenbrockStepper {
 public:
  using Backend = EigenBackend;
  using Vector = Eigen::VectorXd;

  // Validates the tableau and the step control (stop times included); refuses a problem without
  // jvp_vjp, one neither declared autonomous nor giving ∂f/∂t, and adaptive control without an
  // embedded pair. The stage matrices I − hγJ are factored as `linear_solver` says
  // (rewind/integrators/stage_matrix.hpp). A fixed step whose I − hγJ is singular is cut into at
  // most `max_substeps` substeps (1: the run stops there).
  RosenbrockStepper(const P& problem, RosenbrockTableau tableau, StepControl control,
                    ImplicitLinearSolver linear_solver = ImplicitLinearSolver::automatic,
                    int max_substeps = detail::kDefaultMaxSubsteps)
      : problem_(problem),
        tableau_(std::move(tableau)),
        control_(control),
        matrix_(problem, refuse_gmres(linear_solver), tableau_.name),
        max_substeps_(max_substeps) {
    tableau_.validate();
    control_.validate();
    detail::validate_max_substeps(max_substeps, "Rosenbrock");
    if constexpr (!SecondDerivativeProblem<P>)
      detail::fail<InvalidArgument>(
          "Rosenbrock method '", tableau_.name,
          "': the exact adjoint needs second derivatives of f, and the problem has no "
          "jvp_vjp(t, y, theta, u, w, out_y, out_theta) (rwd::auto_problem derives it)");
    autonomous_ = declared_autonomous(problem);
    if (!autonomous_ && !gives_time_derivative(problem))
      detail::fail<InvalidArgument>(
          "Rosenbrock method '", tableau_.name,
          "': a problem whose f depends on t needs df/dt for the stages and its second "
          "derivatives for the adjoint: declare the problem autonomous (static constexpr bool "
          "autonomous = true) if f does not depend on t, or give time_derivative and "
          "time_derivative_vjp (rwd::auto_problem derives them for a model whose rhs takes t as "
          "its scalar type: template <class T> void rhs(T t, const T* y, const T* p, T* f))");
    if (control_.is_adaptive() && !tableau_.has_embedded())
      detail::fail<InvalidArgument>("Rosenbrock method '", tableau_.name,
                                    "' has no embedded error estimate, so it cannot take adaptive "
                                    "steps");
    n_ = problem_.state_size();
    p_ = problem_.parameter_size();
    if (n_ < 1) detail::fail<InvalidArgument>("problem state_size = ", n_, " must be >= 1");
    const auto s = static_cast<std::size_t>(tableau_.stages);
    increments_.assign(s, Vector::Zero(n_));
    increment_adjoints_.assign(s, Vector::Zero(n_));
    argument_ = Vector::Zero(n_);
    work_ = Vector::Zero(n_);
    solved_ = Vector::Zero(n_);
    nu_ = Vector::Zero(n_);
    second_y_ = Vector::Zero(n_);
    y_new_ = Vector::Zero(n_);
    if (!autonomous_) {
      time_rate_ = Vector::Zero(n_);
      time_weight_ = Vector::Zero(n_);
    }
    mu_stage_ = Vector::Zero(p_);
    const int q = std::min(tableau_.order,
                           tableau_.embedded_order > 0 ? tableau_.embedded_order : tableau_.order);
    controller_ = PiController::for_order(q);
  }

  const P& problem() const { return problem_; }
  const RosenbrockTableau& tableau() const { return tableau_; }
  const StepControl& control() const { return control_; }
  Index state_size() const { return n_; }
  Index parameter_size() const { return p_; }
  Index planned_steps() const { return control_.is_adaptive() ? -1 : control_.steps; }
  double last_step_size() const { return h_; }

  const StepperCounters& counters() const { return counters_; }
  const RosenbrockCounters& rosenbrock_counters() const { return rosenbrock_counters_; }
  void reset_counters() {
    counters_ = {};
    rosenbrock_counters_ = {};
  }

  std::string describe() const {
    std::ostringstream out;
    out << tableau_.name << " (Rosenbrock, order " << tableau_.order << "), "
        << (control_.is_adaptive()     ? "adaptive"
            : control_.is_prescribed() ? "prescribed"
                                       : "fixed")
        << " steps, " << matrix_.describe();
    return out.str();
  }

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

  // One accepted step: y ← y_{n+1}, carry ← carry_{n+1}. Throws SolverError when a step cannot
  // be taken (a singular I − hγJ with fixed steps; step size underflow or too many rejections
  // with adaptive ones).
  void step(Vector& y, Carry& carry, const Vector& theta) {
    if (finished(carry))
      detail::fail<InvalidArgument>("step() called at step ", carry.step, " (t = ", carry.t,
                                    ") after the end of the run");
    const Carry next = advance(y, carry, theta);
    y = y_new_;
    carry = next;
    ++counters_.steps;
  }

  // λ ← (∂y_{n+1}/∂y_n)ᵀ λ; mu ← mu + (∂y_{n+1}/∂θ)ᵀ λ, for the step from (y_n, carry_n).
  void adjoint_step(const Vector& y_n, const Carry& carry_n, const Vector& theta, Vector& lambda,
                    Vector& mu) {
    check_sizes(y_n, theta);
    check_adjoint_sizes(lambda, mu);
    advance(y_n, carry_n, theta);  // leaves M = I − hγJ(y_n) factored for the accepted h
    reverse_advanced_step(carry_n.t, y_n, theta, lambda, mu);
    ++counters_.adjoint_steps;
  }

  // The vectors a step keeps for its reverse: y_n, then U_1 … U_s; with adaptive steps one more,
  // holding the accepted step size in its first entry (the carry holds only the size the step
  // tried first). A fixed step taken as substeps keeps y_n and NaN in its last vector (a computed
  // increment is finite), which its reverse reads as "replay the substeps from y_n".
  int stage_count() const { return tableau_.stages + 1 + (control_.is_adaptive() ? 1 : 0); }

  // step(), also writing the vectors stage_count() describes into `stages`.
  void step_keeping_stages(Vector& y, Carry& carry, const Vector& theta, std::span<Vector> stages) {
    require_stage_vectors(stages.size(), "step_keeping_stages");
    stages[0] = y;
    step(y, carry, theta);
    if (substeps_ > 1) {
      stages[stages.size() - 1].setConstant(std::numeric_limits<double>::quiet_NaN());
      return;
    }
    for (std::size_t i = 0; i < increments_.size(); ++i) stages[i + 1] = increments_[i];
    if (control_.is_adaptive()) {
      Vector& size = stages[stages.size() - 1];
      size.setZero();
      size[0] = h_;
    }
  }

  // The adjoint of the step from carry_n whose vectors step_keeping_stages() gave: λ and μ as
  // adjoint_step(), bit for bit, with no right-hand side evaluated.
  void adjoint_step_from_stages(std::span<const Vector> stages, const Carry& carry_n,
                                const Vector& theta, Vector& lambda, Vector& mu) {
    require_stage_vectors(stages.size(), "adjoint_step_from_stages");
    check_sizes(stages[0], theta);
    check_adjoint_sizes(lambda, mu);
    ++counters_.adjoint_steps;
    if (!control_.is_adaptive() && !stages[stages.size() - 1].allFinite()) {
      advance(stages[0], carry_n, theta);  // taken as substeps: replay them from y_n
      reverse_advanced_step(carry_n.t, stages[0], theta, lambda, mu);
      return;
    }
    const double h =
        control_.is_adaptive() ? stages[stages.size() - 1][0] : fixed_step_size(carry_n);
    evaluate_jacobian(carry_n.t, stages[0], theta);
    if (!factor(h))
      detail::fail<SolverError>("adjoint of the step at t = ", carry_n.t, " (h = ", h,
                                "): I - h gamma J is singular");
    reverse(carry_n.t, h, stages[0], stages.data() + 1, theta, lambda, mu);
  }

 private:
  static bool declared_autonomous(const P& problem) {
    if constexpr (DeclaredAutonomousProblem<P>)
      return true;
    else if constexpr (RuntimeAutonomyProblem<P>)
      return problem.declares_autonomous();
    else
      return false;
  }

  static bool gives_time_derivative(const P& problem) {
    if constexpr (!TimeDerivativeProblem<P>)
      return false;
    else if constexpr (RuntimeTimeDerivativeProblem<P>)
      return problem.has_time_derivative();
    else
      return true;
  }

  // Whether the problem has the time-derivative members at all (compiled in); the stages take the
  // term when, besides, it is not declared autonomous (autonomous_).
  static constexpr bool kTimeTerm = TimeDerivativeProblem<P>;

  // A Rosenbrock step's stages are linear solves whose errors enter the step itself: only direct
  // solvers.
  ImplicitLinearSolver refuse_gmres(ImplicitLinearSolver wanted) const {
    if (wanted == ImplicitLinearSolver::gmres || wanted == ImplicitLinearSolver::gmres_ilu)
      detail::fail<InvalidArgument>("Rosenbrock method '", tableau_.name, "': the ",
                                    wanted == ImplicitLinearSolver::gmres ? "gmres" : "gmres-ilu",
                                    " linear solver is for the implicit Runge-Kutta "
                                    "methods; use dense, band or sparse");
    return wanted;
  }

  // A step attempt whose matrix I − hγJ is (numerically) singular.
  struct SingularMatrix {};

  void check_sizes(const Vector& y, const Vector& theta) const {
    if (y.size() != n_)
      detail::fail<InvalidArgument>("state has ", y.size(), " components; the problem has ", n_);
    if (theta.size() != p_)
      detail::fail<InvalidArgument>("parameter vector has ", theta.size(),
                                    " components; the problem has ", p_);
  }
  void check_adjoint_sizes(const Vector& lambda, const Vector& mu) const {
    if (lambda.size() != n_ || mu.size() != p_)
      detail::fail<InvalidArgument>("adjoint vectors have sizes (", lambda.size(), ", ", mu.size(),
                                    "); expected (", n_, ", ", p_, ")");
  }
  void require_stage_vectors(std::size_t given, const char* what) const {
    if (given != static_cast<std::size_t>(stage_count()))
      detail::fail<InvalidArgument>(what, ": ", given, " stage vectors for method '", tableau_.name,
                                    "', which keeps ", stage_count(), " (y_n and ", tableau_.stages,
                                    " increments",
                                    control_.is_adaptive() ? ", then the step size" : "", ")");
  }

  double fixed_step_size(const Carry& carry) const {
    return control_.is_prescribed() ? control_.step_sizes[static_cast<std::size_t>(carry.step)]
                                    : control_.dt;
  }

  // Runs the step from (y, carry), with any rejected attempts: leaves the accepted step's
  // increments in increments_, its factored matrix in matrix_, its size in h_ and y_{n+1} in
  // y_new_. Returns carry_{n+1}. Never modifies y.
  Carry advance(const Vector& y, const Carry& carry, const Vector& theta) {
    Carry next = carry;
    next.step = carry.step + 1;
    substeps_ = 1;
    if (!control_.is_adaptive()) {
      h_ = fixed_step_size(carry);
      try {
        solve_step(y, carry.t, h_, theta);
      } catch (const SingularMatrix&) {
        solve_in_substeps(y, carry, theta);
      }
      next.t = control_.is_prescribed()
                   ? carry.t + h_
                   : control_.t0 + static_cast<double>(next.step) * control_.dt;
      return next;
    }
    return detail::adaptive_step(
        control_, controller_, carry, "I - h gamma J singular", counters_.rejected_attempts, h_,
        [&](double h) -> std::optional<double> {
          try {
            solve_step(y, carry.t, h, theta);
          } catch (const SingularMatrix&) {
            return std::nullopt;
          }
          error_estimate();
          return Backend::error_norm(work_, y, y_new_, control_.rtol, control_.atol);
        });
  }

  // The held step of size h_ from (y, carry), whose M was singular whole, as m = 2, 4, … ≤
  // max_substeps_ equal substeps (rewind/integrators/held_step_substeps.hpp): leaves substeps_ = m,
  // their starts in substep_starts_, the last one's increments and factored M in increments_ and
  // matrix_, y_{n+1} in y_new_. Throws SolverError naming the step when no m succeeds.
  void solve_in_substeps(const Vector& y, const Carry& carry, const Vector& theta) {
    SingularMatrix last;
    int tried = 1;
    substeps_ = detail::first_substep_count(
        max_substeps_,
        [&](int j, int m) {
          if (j == 0 && substep_starts_.size() < static_cast<std::size_t>(m))
            substep_starts_.resize(static_cast<std::size_t>(m), Vector::Zero(n_));
          Vector& start = substep_starts_[static_cast<std::size_t>(j)];
          start = j == 0 ? y : y_new_;
          solve_step(start, detail::substep_time(carry.t, j, h_ / m), h_ / m, theta);
        },
        last, tried);
    if (substeps_ == 0) {
      detail::fail<SolverError>("step ", carry.step, " at t = ", carry.t, " (h = ", h_,
                                "): the matrix I - h gamma J is singular",
                                detail::substeps_tried_text(tried), "; take smaller steps");
    }
    ++rosenbrock_counters_.substepped_steps;
    detail::warn_first_substeps(warned_substeps_, "Rosenbrock engine", tableau_.name,
                                "I - h gamma J was singular", carry.step, carry.t, h_, substeps_);
  }

  // The reverse of the step advance() has just taken from y_n at t: through its increments, or
  // through its substeps, last first, each re-run from its start (the same operations on the same
  // bits) but the last, whose increments and factored M are still there.
  void reverse_advanced_step(double t, const Vector& y_n, const Vector& theta, Vector& lambda,
                             Vector& mu) {
    if (substeps_ == 1) {
      reverse(t, h_, y_n, increments_.data(), theta, lambda, mu);
      return;
    }
    const double hs = h_ / substeps_;
    for (int j = substeps_ - 1; j >= 0; --j) {
      const double tj = detail::substep_time(t, j, hs);
      const Vector& start = substep_starts_[static_cast<std::size_t>(j)];
      if (j < substeps_ - 1) {
        try {
          solve_step(start, tj, hs, theta);
        } catch (const SingularMatrix&) {
          detail::fail<SolverError>("adjoint of the step at t = ", t, " (h = ", h_, "): substep ",
                                    j + 1, " of ", substeps_,
                                    ", whose matrix factored forward, is singular when replayed");
        }
      }
      reverse(tj, hs, start, increments_.data(), theta, lambda, mu);
    }
  }

  // A first adaptive step of 1 % of the time y0 takes to change by its own size at the rate
  // f(t0, y0), both in the run's error norm (as the implicit engine chooses it).
  double starting_step(const Vector& y0, const Vector& theta) {
    problem_.rhs(control_.t0, y0, theta, work_);
    ++counters_.rhs_evaluations;
    const double d0 = Backend::error_norm(y0, y0, y0, control_.rtol, control_.atol);
    const double d1 = Backend::error_norm(work_, y0, y0, control_.rtol, control_.atol);
    const double span = control_.t_final - control_.t0;
    const double h = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 * span : 0.01 * d0 / d1;
    if (!std::isfinite(h) || h <= 0.0)
      detail::fail<SolverError>("could not choose a starting step at t0 = ", control_.t0,
                                " (non-finite f(y0)?); give StepControl::dt explicitly");
    return std::min(h, span);
  }

  // J = ∂f/∂y at (t, y) into the stage matrix (rwd::StageMatrix: the problem's own Jacobian, or
  // one assembled exactly from vjps; dense or band).
  void evaluate_jacobian(double t, const Vector& y, const Vector& theta) {
    ++rosenbrock_counters_.jacobian_evaluations;
    counters_.vjp_evaluations += matrix_.evaluate_jacobian(t, y, theta);
  }

  // M = I − hγJ factored. False when M is (numerically) singular.
  bool factor(double h) {
    ++rosenbrock_counters_.factorizations;
    return matrix_.factor(h * tableau_.gamma);
  }

  // argument_ = g_i = y + Σ_{j<i} a_ij U_j (the forward and the reverse both compute it here, so
  // both get the same bits).
  void stage_argument(int i, const Vector& y, const Vector* increments) {
    argument_ = y;
    for (int j = 0; j < i; ++j) {
      const double a = tableau_.a_at(i, j);
      if (a != 0.0) argument_ += a * increments[j];
    }
  }

  // The increments U_i and y_{n+1} of one attempt of size h from (t, y). Throws SingularMatrix.
  void solve_step(const Vector& y, double t, double h, const Vector& theta) {
    evaluate_jacobian(t, y, theta);
    if (!factor(h)) throw SingularMatrix{};
    const double hg = h * tableau_.gamma;
    if constexpr (kTimeTerm)
      if (!autonomous_) {
        problem_.time_derivative(t, y, theta, time_rate_);  // ∂f/∂t(t_n, y_n)
        ++rosenbrock_counters_.time_derivative_evaluations;
      }
    for (int i = 0; i < tableau_.stages; ++i) {
      stage_argument(i, y, increments_.data());
      problem_.rhs(t + tableau_.alpha[static_cast<std::size_t>(i)] * h, argument_, theta, work_);
      ++counters_.rhs_evaluations;
      work_ *= hg;  // q_i = hγ F_i + Σ_{j<i} γ c_ij U_j
      for (int j = 0; j < i; ++j) {
        const double c = tableau_.c_at(i, j);
        if (c != 0.0) work_ += (tableau_.gamma * c) * increments_[static_cast<std::size_t>(j)];
      }
      if (const double d = time_term(i, h); d != 0.0) work_ += d * time_rate_;
      Vector& increment = increments_[static_cast<std::size_t>(i)];
      increment = work_;
      matrix_.solve(increment, /*transposed=*/false);
    }
    y_new_ = y;
    for (int i = 0; i < tableau_.stages; ++i) {
      const double m = tableau_.m[static_cast<std::size_t>(i)];
      if (m != 0.0) y_new_ += m * increments_[static_cast<std::size_t>(i)];
    }
  }

  // The coefficient hγ · γ_i h of ∂f/∂t(t_n, y_n) in stage i's right side q_i (0 for an
  // autonomous problem): (I/(hγ) − J) U_i = … + γ_i h ∂f/∂t, multiplied by hγ.
  double time_term(int i, double h) const {
    if (autonomous_) return 0.0;
    return (h * tableau_.gamma) * (tableau_.gamma_sum[static_cast<std::size_t>(i)] * h);
  }

  // work_ = Σ (m_i − m̂_i) U_i, the embedded error estimate.
  void error_estimate() {
    work_.setZero();
    for (int i = 0; i < tableau_.stages; ++i) {
      const double w = tableau_.m[static_cast<std::size_t>(i)] -
                       tableau_.m_embedded[static_cast<std::size_t>(i)];
      if (w != 0.0) work_ += w * increments_[static_cast<std::size_t>(i)];
    }
  }

  // The reverse pass of the step (t, h) from y_n with increments U[0 .. s), matrix_ holding the
  // factored I − hγJ(t, y_n): see the top of the file.
  void reverse(double t, double h, const Vector& y_n, const Vector* U, const Vector& theta,
               Vector& lambda, Vector& mu) {
    const int s = tableau_.stages;
    const double hg = h * tableau_.gamma;
    for (int i = 0; i < s; ++i)
      increment_adjoints_[static_cast<std::size_t>(i)] =
          tableau_.m[static_cast<std::size_t>(i)] * lambda;
    second_y_.setZero();                       // Σ_i (ν_i + σ_i), added to λ at the end
    if (!autonomous_) time_weight_.setZero();  // Σ_i hγ γ_i h q̄_i, the adjoint of ∂f/∂t
    for (int i = s - 1; i >= 0; --i) {
      solved_ = increment_adjoints_[static_cast<std::size_t>(i)];
      matrix_.solve(solved_, /*transposed=*/true);  // q̄_i
      if (const double d = time_term(i, h); d != 0.0) time_weight_ += d * solved_;
      for (int j = 0; j < i; ++j) {
        const double c = tableau_.c_at(i, j);
        if (c != 0.0)
          increment_adjoints_[static_cast<std::size_t>(j)] += (tableau_.gamma * c) * solved_;
      }
      solved_ *= hg;  // w_i, the adjoint of F_i
      stage_argument(i, y_n, U);
      problem_.vjp(t + tableau_.alpha[static_cast<std::size_t>(i)] * h, argument_, theta, solved_,
                   nu_, mu_stage_);
      ++counters_.vjp_evaluations;
      if (p_ > 0) mu += mu_stage_;
      second_y_ += nu_;
      for (int j = 0; j < i; ++j) {
        const double a = tableau_.a_at(i, j);
        if (a != 0.0) increment_adjoints_[static_cast<std::size_t>(j)] += a * nu_;
      }
      add_jacobian_adjoint(t, y_n, U[i], theta, mu);
    }
    if constexpr (kTimeTerm)
      if (!autonomous_) {  // ∇_{(y, θ)} [time_weight_ᵀ ∂f/∂t] at (t_n, y_n)
        problem_.time_derivative_vjp(t, y_n, theta, time_weight_, nu_, mu_stage_);
        ++rosenbrock_counters_.time_derivative_evaluations;
        second_y_ += nu_;
        if (p_ > 0) mu += mu_stage_;
      }
    lambda += second_y_;
  }

  // second_y_ += ∇_y [w_iᵀ J(y_n) U_i], mu += ∇_θ [the same], w_i in solved_.
  void add_jacobian_adjoint(double t, const Vector& y_n, const Vector& u, const Vector& theta,
                            Vector& mu) {
    // Only for a problem the constructor accepts (an unfit one never gets here): a factory that
    // instantiates the engine for every problem does not compile unused second derivatives.
    if constexpr (SecondDerivativeProblem<P> &&
                  (DeclaredAutonomousProblem<P> || RuntimeAutonomyProblem<P> || kTimeTerm)) {
      problem_.jvp_vjp(t, y_n, theta, u, solved_, nu_, mu_stage_);
      ++rosenbrock_counters_.second_derivative_evaluations;
      second_y_ += nu_;
      if (p_ > 0) mu += mu_stage_;
    }
  }

  const P& problem_;
  RosenbrockTableau tableau_;
  StepControl control_;
  Index n_ = 0, p_ = 0;
  std::vector<Vector> increments_;          // U_1 … U_s of the last step computed
  std::vector<Vector> increment_adjoints_;  // Ū_1 … Ū_s of the step being reversed
  Vector argument_, work_, solved_, nu_, second_y_, y_new_, mu_stage_;
  bool autonomous_ = true;          // f does not depend on t: no time-derivative term
  Vector time_rate_, time_weight_;  // ∂f/∂t(t_n, y_n) and its adjoint weight (non-autonomous)
  StageMatrix<P> matrix_;           // J(y_n), I − hγJ factored, solves
  double h_ = 0.0;
  int max_substeps_ =
      detail::kDefaultMaxSubsteps;      // a held step's most substeps (solve_in_substeps)
  int substeps_ = 1;                    // substeps of the step advance() took last (fixed steps)
  std::vector<Vector> substep_starts_;  // their start states
  bool warned_substeps_ = false;        // warn_first_substeps has warned
  PiController controller_;
  StepperCounters counters_;
  RosenbrockCounters rosenbrock_counters_;
};

}  // namespace rwd
