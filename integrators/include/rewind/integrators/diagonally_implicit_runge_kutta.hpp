// rewind/integrators/diagonally_implicit_runge_kutta.hpp — one engine for the diagonally implicit
// Runge–Kutta methods (rewind/integrators/implicit_tableau.hpp), for stiff problems, with the
// exact discrete adjoint of the steps it computes.
//
//   rwd::Robertson chemistry;
//   rwd::DiagonallyImplicitRungeKutta stepper(chemistry, rwd::ImplicitTableau::esdirk43(),
//                                             rwd::StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10));
//   rwd::StoreAllAdjoint driver(stepper, objective);   // or any checkpointed driver and schedule
//
// Forward step (s stages, A lower triangular): for i = 1..s
//   Y_i = y_n + h Σ_{j<i} a_ij k_j + h a_ii f(t_n + c_i h, Y_i),   k_i = f(t_n + c_i h, Y_i),
// then y_{n+1} = y_n + h Σ_i b_i k_i. A stage with a_ii = 0 is explicit. An implicit stage is
// solved by a simplified Newton iteration on G(Z) = Z − base_i − h a_ii f(t_i, Z) with the
// iteration matrix M = I − h a_ii J, J = ∂f/∂y at (t_n, y_n) evaluated once per step (attempt) and
// factored by LU with partial pivoting (dense or band, below; one factorisation per distinct
// diagonal coefficient — one for an SDIRK or ESDIRK method). The iteration stops when the weighted
// RMS norm of its last update, with weights 1/(atol + rtol·|Z|) from NewtonOptions, is at most 1;
// k_i is then evaluated at the converged Y_i.
//
// Adjoint step, the exact derivative of that map at the converged stage values (the implicit
// function theorem: exact for the numbers computed up to the Newton residual, which
// NewtonOptions sets). Given λ_{n+1} = ∂J/∂y_{n+1}, for i = s..1
//   (I − h a_ii J_iᵀ) u_i = h b_i λ_{n+1} + h Σ_{j>i} a_ji ν_j,   J_i = ∂f/∂y(t_i, Y_i),
//   (ν_i, μ_i) = ((∂f/∂y)ᵀ u_i, (∂f/∂θ)ᵀ u_i) at (t_i, Y_i)   (the problem's vjp),
// then λ_n = λ_{n+1} + Σ_i ν_i and dJ/dθ += Σ_i μ_i. u_i is the adjoint of k_i: with a_ii = 0 the
// solve is the identity and this is the explicit engine's adjoint. The transposed solves use the
// exact J_i at each converged stage, applied by the problem's vjp, in an iteration preconditioned
// by the factored I − h a_ii J at the last stage (exact there), converged to round-off
// (transposed_stage_solve); one Jacobian and one factorisation per reversed step. adjoint_step()
// first re-runs the forward step from (y_n, carry_n) — the same Newton iterations on the same bits
// — to rebuild the stages; adjoint_step_from_stages() reverses a step from stage values kept by
// step_keeping_stages() (stage-aware schedules, store-all keeping stages) and solves no nonlinear
// system.
//
// Adaptive runs: the embedded error estimate h Σ (b_i − b̂_i) k_i, filtered by the attempt's
// factored (I − h γ J)⁻¹ (filter_error_estimate: stiff components damped), in the run's error
// norm and the explicit engine's PI controller (rewind/integrators/step_control.hpp); a Newton
// iteration that does not converge rejects the attempt and retries with a quarter of the step.
// A fixed or prescribed step whose stage equations fail (a Newton iteration that does not converge,
// a singular iteration matrix) is taken instead as 2, 4, … equal substeps, the first count all of
// whose substeps succeed, up to NewtonOptions::max_substeps (solve_in_substeps): a step held by a
// data fit's grid, chosen by an adaptive run at other parameters, may be too long for the
// parameters an optimiser tries — Robertson's held steps of 1.6·10⁵ near t = 3·10⁶ have no stage
// solution connected to the previous stage there. The step's map is then the composition of its
// substeps, deterministic in (y_n, θ, h), and its adjoint reverses them one by one (replayed, or
// from y_n when the stages were kept: such a step keeps y_n and a marker, not its stages). Past
// max_substeps the run stops with rwd::SolverError naming the step and the time. Accepted step
// sizes are constants of the discrete map, as for the explicit engine. Stop times
// (StepControl::stop_times) are landed on exactly, by the explicit engine's rule
// (rewind/integrators/stop_time_landing.hpp): a step is cut, or its first attempt stretched, to end
// on the next one, the carry's t is that time itself, and the step's adjoint uses the size the step
// took — replayed from (y_n, carry_n), or kept with its stages.
//
// The problem: an rwd::Problem on rwd::EigenBackend, or on another backend with a jvp — a state
// split across MPI ranks (rwd::DistributedBackend) or in device vectors (rwd::ThrustBackend), whose
// CvodesVectorTraits say matrix_free_implicit — where the stage solves are matrix-free GMRES alone
// (rwd::MatrixFreeStageMatrix; the vector arithmetic the backend's, the same operations per entry
// as Eigen's expressions here). Linear algebra on Eigen (NewtonOptions::
// linear_solver, rewind/integrators/stage_matrix.hpp): band when the problem states its band
// (LAPACK, the band Jacobian the problem's own or assembled exactly from upper + lower + 1 vjps),
// dense otherwise (Eigen, the problem's jacobian() or one assembled from n vjps; at most 5000
// states); sparse on request (KLU, the problem's sparse Jacobian); or matrix-free GMRES on
// request (the problem's jvp): then each Newton iteration takes J at its own iterate (a full
// Newton iteration, as a point costs nothing), and each transposed stage solve is GMRES with the
// exact J_iᵀ by vjps to a relative residual of 10⁻¹⁴ — no preconditioning iteration around it.
//
// Determinism: the same operations in the same order every time (Eigen runs single-threaded in
// rewind: EIGEN_DONT_PARALLELIZE), so replays from snapshots give the first run's bits and every
// schedule and store gives the same gradient.
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
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/adaptive_attempts.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/held_step_substeps.hpp"
#include "rewind/integrators/implicit_tableau.hpp"
#include "rewind/integrators/matrix_free_stage_matrix.hpp"
#include "rewind/integrators/stage_matrix.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stop_time_landing.hpp"
#include "rewind/problem.hpp"

namespace rwd {

// The Newton iteration of each implicit stage.
struct NewtonOptions {
  // The iteration has converged when ‖ΔZ‖ ≤ 1 in the weighted RMS norm with weights
  // 1 / (atol + rtol·|Z_i|). Both must be > 0: a tolerance of zero can never be met.
  double rtol = 1e-10;
  double atol = 1e-12;
  int max_iterations = 10;  // per stage and attempt
  ImplicitLinearSolver linear_solver = ImplicitLinearSolver::automatic;
  // Fixed or prescribed steps: the most equal substeps a step whose stage equations fail is cut
  // into (2, 4, … up to this); 1 stops the run at the first failure. Adaptive steps shrink instead.
  // A step cut into m substeps holds their m start states (state-sized vectors, kept by the
  // stepper for its reverse), so a large state may want a smaller limit.
  int max_substeps = detail::kDefaultMaxSubsteps;

  void validate() const {
    if (!(rtol > 0.0) || !std::isfinite(rtol))
      detail::fail<InvalidArgument>("Newton rtol = ", rtol, " must be finite and > 0");
    if (rtol < 1e-15)
      detail::fail<InvalidArgument>("Newton rtol = ", rtol,
                                    " is below double-precision round-off; use rtol >= 1e-15");
    if (!(atol > 0.0) || !std::isfinite(atol))
      detail::fail<InvalidArgument>("Newton atol = ", atol, " must be finite and > 0");
    if (max_iterations < 1)
      detail::fail<InvalidArgument>("Newton max_iterations = ", max_iterations, " must be >= 1");
    detail::validate_max_substeps(max_substeps, "Newton");
  }
};

// Work of the implicit stages since construction (or reset_counters()).
struct ImplicitCounters {
  Index newton_iterations = 0;     // Newton updates, forward and replayed
  Index jacobian_evaluations = 0;  // one per step attempt (and Newton refresh), one per step
                                   // reversed (and adjoint fallback)
  Index factorizations = 0;        // LU factorisations
  Index newton_failures = 0;       // attempts rejected because an iteration did not converge
  Index substepped_steps = 0;      // fixed steps taken as substeps (solve_in_substeps), replays too
  Index adjoint_iterations = 0;    // preconditioned iterations of the transposed stage solves
  Index adjoint_fallbacks = 0;     // transposed solves that factored their own stage matrix
  Index gmres_products = 0;        // matrix-free GMRES: the jvps and vjps of its solves
};

namespace detail {
// The stage matrices of an engine on P's backend: every solver on Eigen, GMRES alone on another.
template <class P, bool Eigen = std::is_same_v<typename P::Backend, EigenBackend>>
struct StageMatrixFor {
  using type = MatrixFreeStageMatrix<P>;
};
template <class P>
struct StageMatrixFor<P, true> {
  using type = StageMatrix<P>;
};
}  // namespace detail

// A problem the diagonally implicit engine runs: one on the Eigen backend (every linear solver),
// or on another backend with a jvp (a state split across MPI ranks: matrix-free GMRES).
template <class P>
concept MatrixFreeImplicitProblem = Problem<P> && detail::HasJvp<P>;
template <class P>
concept DiagonallyImplicitProblem = ImplicitEngineProblem<P> || MatrixFreeImplicitProblem<P>;

template <DiagonallyImplicitProblem P>
class DiagonallyImplicitRungeKutta {
 public:
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;

  // Validates the tableau, the step control (stop times included) and the Newton options;
  // adaptive control needs an embedded pair.
  DiagonallyImplicitRungeKutta(const P& problem, ImplicitTableau tableau, StepControl control,
                               NewtonOptions newton = {})
      : problem_(problem),
        tableau_(validated(std::move(tableau))),
        control_(validated(control)),
        newton_(validated(newton)),
        matrix_(problem, newton_.linear_solver, tableau_.name) {
    if (control_.is_adaptive() && !tableau_.has_embedded())
      detail::fail<InvalidArgument>("method '", tableau_.name,
                                    "' has no embedded error estimate, so it cannot take adaptive "
                                    "steps; use trapezoid, sdirk2, esdirk32 or esdirk43");
    n_ = problem_.state_size();
    p_ = problem_.parameter_size();
    if (n_ < 1) detail::fail<InvalidArgument>("problem state_size = ", n_, " must be >= 1");
    const int s = tableau_.stages;
    stages_.assign(static_cast<std::size_t>(s), Backend::zeros(n_));
    k_.assign(static_cast<std::size_t>(s), Backend::zeros(n_));
    nu_.assign(static_cast<std::size_t>(s), Backend::zeros(n_));
    base_ = Backend::zeros(n_);
    work_ = Backend::zeros(n_);
    update_ = Backend::zeros(n_);
    u_ = Backend::zeros(n_);
    rhs_ = Backend::zeros(n_);
    correction_ = Backend::zeros(n_);
    mu_stage_ = Backend::zeros(p_);
    y_new_ = Backend::zeros(n_);
    const int q = std::min(tableau_.order,
                           tableau_.embedded_order > 0 ? tableau_.embedded_order : tableau_.order);
    controller_ = PiController::for_order(q);
  }

  const P& problem() const { return problem_; }
  const ImplicitTableau& tableau() const { return tableau_; }
  const StepControl& control() const { return control_; }
  const NewtonOptions& newton() const { return newton_; }
  Index state_size() const { return n_; }
  Index parameter_size() const { return p_; }
  Index planned_steps() const { return control_.is_adaptive() ? -1 : control_.steps; }
  double last_step_size() const { return h_; }

  const StepperCounters& counters() const { return counters_; }
  const ImplicitCounters& implicit_counters() const {
    implicit_counters_.gmres_products = matrix_.gmres_products() - gmres_products_at_reset_;
    return implicit_counters_;
  }
  void reset_counters() {
    counters_ = {};
    implicit_counters_ = {};
    gmres_products_at_reset_ = matrix_.gmres_products();
  }

  std::string describe() const {
    std::ostringstream out;
    out << tableau_.name << " (diagonally implicit, order " << tableau_.order << "), "
        << (control_.is_adaptive()     ? "adaptive"
            : control_.is_prescribed() ? "prescribed"
                                       : "fixed")
        << " steps, Newton rtol = " << newton_.rtol << ", atol = " << newton_.atol << ", "
        << matrix_.describe();
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
  // be taken (a Newton iteration that does not converge with fixed steps; step size underflow
  // or too many rejections with adaptive ones).
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
    advance(y_n, carry_n, theta);
    reverse_advanced_step(carry_n.t, theta, lambda, mu);
    ++counters_.adjoint_steps;
  }

  // The vectors a step keeps for its reverse (each of the state's size): y_n first — the kept
  // vectors also stand for the step's start, which a schedule may restore and an observation
  // reads — then the stage values Y_1 … Y_s, where an explicit first stage's Y_1 is y_n itself
  // and is kept once; with adaptive steps one more, holding the accepted step size in its first
  // entry (the carry holds only the size the step tried first). A fixed step taken as substeps
  // keeps y_n first and NaN in its last vector (a converged stage is finite), which its reverse
  // reads as "replay the substeps from y_n".
  int stage_count() const {
    return stage_offset() + tableau_.stages + (control_.is_adaptive() ? 1 : 0);
  }

  // step(), also writing the vectors stage_count() describes into `stages`.
  void step_keeping_stages(Vector& y, Carry& carry, const Vector& theta, std::span<Vector> stages) {
    require_stage_vectors(stages.size(), "step_keeping_stages");
    if (stage_offset() == 1) stages[0] = y;
    step(y, carry, theta);
    if (substeps_ > 1) {
      keep_substep_marker(stages);
      return;
    }
    const auto offset = static_cast<std::size_t>(stage_offset());
    for (std::size_t i = 0; i < stages_.size(); ++i) stages[offset + i] = stages_[i];
    if (control_.is_adaptive()) {
      Vector& size = stages[stages.size() - 1];
      if constexpr (kEigen) {
        size.setZero();
        size[0] = h_;
      } else {
        Backend::fill(size, h_);  // every entry: read back by the max norm, on any backend
      }
    }
  }

  // The adjoint of the step from carry_n whose vectors step_keeping_stages() gave: λ and μ as
  // adjoint_step(), bit for bit, with no Newton iteration.
  void adjoint_step_from_stages(std::span<const Vector> stages, const Carry& carry_n,
                                const Vector& theta, Vector& lambda, Vector& mu) {
    require_stage_vectors(stages.size(), "adjoint_step_from_stages");
    check_sizes(stages[0], theta);
    check_adjoint_sizes(lambda, mu);
    ++counters_.adjoint_steps;
    if (!control_.is_adaptive() && !Backend::all_finite(stages[stages.size() - 1])) {
      advance(stages[0], carry_n, theta);  // taken as substeps: replay them from y_n
      reverse_advanced_step(carry_n.t, theta, lambda, mu);
      return;
    }
    const double h = control_.is_adaptive() ? kept_step_size(stages[stages.size() - 1])
                                            : fixed_step_size(carry_n);
    reverse(carry_n.t, h, theta, lambda, mu, stages.data() + stage_offset());
  }

 private:
  // A Newton iteration that did not converge (an adaptive step retries smaller).
  struct NewtonFailure {
    int stage;
    int iterations;
    double update_norm;
  };

  void check_sizes(const Vector& y, const Vector& theta) const {
    if (Backend::size(y) != n_)
      detail::fail<InvalidArgument>("state has ", Backend::size(y), " components; the problem has ",
                                    n_);
    if (Backend::size(theta) != p_)
      detail::fail<InvalidArgument>("parameter vector has ", Backend::size(theta),
                                    " components; the problem has ", p_);
  }
  void check_adjoint_sizes(const Vector& lambda, const Vector& mu) const {
    if (Backend::size(lambda) != n_ || Backend::size(mu) != p_)
      detail::fail<InvalidArgument>("adjoint vectors have sizes (", Backend::size(lambda), ", ",
                                    Backend::size(mu), "); expected (", n_, ", ", p_, ")");
  }

  // The step size step_keeping_stages() kept in its last vector.
  static double kept_step_size(const Vector& size) {
    if constexpr (kEigen)
      return size[0];
    else
      return Backend::max_norm(size);  // h > 0 in every entry: exactly h
  }

  // Vector arithmetic: Eigen's expressions on the Eigen backend (the bits this engine has always
  // computed), the backend's element-wise operations on another (the same operations per entry).
  static constexpr bool kEigen = std::is_same_v<Backend, EigenBackend>;
  static void zero(Vector& y) {
    if constexpr (kEigen)
      y.setZero();
    else
      Backend::fill(y, 0.0);
  }
  static void assign(Vector& y, const Vector& x) {
    if constexpr (kEigen)
      y = x;
    else
      Backend::copy(x, y);
  }
  // y += a·x
  static void add(Vector& y, double a, const Vector& x) {
    if constexpr (kEigen)
      y += a * x;
    else
      Backend::axpy(a, x, y);
  }
  // y = a·x
  static void assign_scaled(Vector& y, double a, const Vector& x) {
    if constexpr (kEigen) {
      y = a * x;
    } else {
      Backend::copy(x, y);
      Backend::scale(a, y);
    }
  }
  void require_stage_vectors(std::size_t given, const char* what) const {
    if (given != static_cast<std::size_t>(stage_count()))
      detail::fail<InvalidArgument>(what, ": ", given, " stage vectors for method '", tableau_.name,
                                    "', which keeps ", stage_count(), " (", tableau_.stages,
                                    " stages", stage_offset() == 1 ? " after y_n" : "",
                                    control_.is_adaptive() ? ", then the step size" : "", ")");
  }
  // 1 when the kept vectors start with y_n ahead of the stages (a first stage that is implicit),
  // 0 when Y_1 = y_n is the first of them.
  int stage_offset() const { return tableau_.implicit_stage(0) ? 1 : 0; }

  double fixed_step_size(const Carry& carry) const {
    return control_.is_prescribed() ? control_.step_sizes[static_cast<std::size_t>(carry.step)]
                                    : control_.dt;
  }

  // Runs the step from (y, carry), with any rejected attempts: leaves the accepted step's stages
  // in stages_ and k_, its size in h_ and y_{n+1} in y_new_. Returns carry_{n+1}. Never modifies y.
  Carry advance(const Vector& y, const Carry& carry, const Vector& theta) {
    Carry next = carry;
    next.step = carry.step + 1;
    substeps_ = 1;
    if (!control_.is_adaptive()) {
      h_ = fixed_step_size(carry);
      try {
        solve_step(y, carry.t, h_, theta);
      } catch (const NewtonFailure& f) {
        ++implicit_counters_.newton_failures;
        solve_in_substeps(y, carry, theta, f);
      }
      next.t = control_.is_prescribed()
                   ? carry.t + h_
                   : control_.t0 + static_cast<double>(next.step) * control_.dt;
      return next;
    }
    return detail::adaptive_step(
        control_, controller_, carry, "Newton did not converge", counters_.rejected_attempts, h_,
        [&](double h) -> std::optional<double> {
          try {
            solve_step(y, carry.t, h, theta);
          } catch (const NewtonFailure&) {
            ++implicit_counters_.newton_failures;
            return std::nullopt;
          }
          error_estimate(h);
          filter_error_estimate();
          return Backend::error_norm(work_, y, y_new_, control_.rtol, control_.atol);
        });
  }

  // The held step of size h_ from (y, carry), whose stage equations failed whole, as m = 2, 4, …
  // ≤ max_substeps equal substeps of h_/m: the first m all of whose substeps succeed. Leaves
  // substeps_ = m, their start states in substep_starts_[0 .. m), the last one's stages in stages_
  // and k_ and y_{n+1} in y_new_, as solve_step does for a whole step. Throws SolverError naming
  // the step when no m up to max_substeps succeeds.
  void solve_in_substeps(const Vector& y, const Carry& carry, const Vector& theta,
                         NewtonFailure failure) {
    int tried = 1;
    substeps_ = detail::first_substep_count(
        newton_.max_substeps,
        [&](int j, int m) {
          if (j == 0 && substep_starts_.size() < static_cast<std::size_t>(m))
            substep_starts_.resize(static_cast<std::size_t>(m), Backend::zeros(n_));
          Vector& start = substep_starts_[static_cast<std::size_t>(j)];
          assign(start, j == 0 ? y : y_new_);
          try {
            solve_step(start, detail::substep_time(carry.t, j, h_ / m), h_ / m, theta);
          } catch (const NewtonFailure&) {
            ++implicit_counters_.newton_failures;
            throw;
          }
        },
        failure, tried);
    if (substeps_ == 0) fail_newton(carry, h_, failure, tried);
    ++implicit_counters_.substepped_steps;
    detail::warn_first_substeps(warned_substeps_, "implicit engine", tableau_.name,
                                "the stage equations failed", carry.step, carry.t, h_, substeps_);
  }

  // The reverse of the step advance() has just taken (t: its start): through its stages, or
  // through its substeps, last first, each re-solved from its start (the same bits as forward:
  // solve_step is a function of its arguments alone) but the last, whose stages are still there.
  void reverse_advanced_step(double t, const Vector& theta, Vector& lambda, Vector& mu) {
    if (substeps_ == 1) {
      reverse(t, h_, theta, lambda, mu, stages_.data());
      return;
    }
    const double hs = h_ / substeps_;
    for (int j = substeps_ - 1; j >= 0; --j) {
      const double tj = detail::substep_time(t, j, hs);
      if (j < substeps_ - 1) {
        try {
          solve_step(substep_starts_[static_cast<std::size_t>(j)], tj, hs, theta);
        } catch (const NewtonFailure&) {
          detail::fail<SolverError>("adjoint of the step at t = ", t, " (h = ", h_, "): substep ",
                                    j + 1, " of ", substeps_,
                                    ", which converged forward, failed when replayed");
        }
      }
      reverse(tj, hs, theta, lambda, mu, stages_.data());
    }
  }

  // The kept vectors of a step taken as substeps: y_n (the first substep's start) first, NaN in
  // the last (see stage_count()).
  void keep_substep_marker(std::span<Vector> stages) const {
    assign(stages[0], substep_starts_[0]);
    Vector& marker = stages[stages.size() - 1];
    if constexpr (kEigen)
      marker.setConstant(std::numeric_limits<double>::quiet_NaN());
    else
      Backend::fill(marker, std::numeric_limits<double>::quiet_NaN());
  }

  // A fixed step that failed whole and in every count of substeps up to `substeps` (1: not cut).
  [[noreturn]] void fail_newton(const Carry& carry, double h, const NewtonFailure& f,
                                int substeps) const {
    const std::string cut = detail::substeps_tried_text(substeps);
    if (f.stage < 0)
      detail::fail<SolverError>("step ", carry.step, " at t = ", carry.t, " (h = ", h,
                                "): the iteration matrix I - h a_ii J is singular", cut,
                                " (reciprocal condition ", f.update_norm, "); take smaller steps");
    detail::fail<SolverError>("step ", carry.step, " at t = ", carry.t, " (h = ", h,
                              "): the Newton iteration of stage ", f.stage + 1, " did not converge",
                              cut, " (last: ", f.iterations, " iterations, update norm ",
                              f.update_norm, "); take smaller steps or loosen NewtonOptions");
  }

  // A first adaptive step of 1 % of the time y0 takes to change by its own size at the rate
  // f(t0, y0), both in the run's error norm (the first part of Hairer's heuristic, Solving ODEs
  // I, §II.4; its second-derivative estimate would need an explicit step, unstable here): a
  // stiff problem's fast transient then starts with a small step. One right-hand side.
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

  template <class T>
  static T validated(T x) {
    x.validate();
    return x;
  }

  // J at (t, y) into the stage matrix (counted: the Jacobian, and the vjps that assembled it).
  void evaluate_jacobian(double t, const Vector& y, const Vector& theta) {
    ++implicit_counters_.jacobian_evaluations;
    counters_.vjp_evaluations += matrix_.evaluate_jacobian(t, y, theta);
  }

  // I − h γ J factored. False when singular.
  bool factor_matrix(double h, double gamma) {
    ++implicit_counters_.factorizations;
    return matrix_.factor(h * gamma);
  }

  // work_ = h Σ (b_i − b̂_i) k_i, the embedded error estimate.
  void error_estimate(double h) {
    zero(work_);
    for (int i = 0; i < tableau_.stages; ++i) {
      const double w = tableau_.b[static_cast<std::size_t>(i)] -
                       tableau_.b_embedded[static_cast<std::size_t>(i)];
      if (w != 0.0) add(work_, h * w, k_[static_cast<std::size_t>(i)]);
    }
  }

  // work_ ← (I − h γ J)⁻¹ work_ with the attempt's iteration matrix: the estimate filtered of its
  // stiff components (Shampine, "Implementation of implicit formulas for the solution of ODEs",
  // SIAM J. Sci. Stat. Comput. 1, 1980; Hairer & Wanner, Solving ODEs II, §IV.8). Unfiltered,
  // h Σ (b_i − b̂_i) k_i stays of order one along a stiff component with h|λ| ≫ 1 however small h
  // is made (each k_i carries λ times a stage's deviation from the slow manifold, of order 1/h),
  // so that a tight atol on a small stiff component — Robertson's y₂ near 10⁻⁹ at t ≈ 10⁵ —
  // rejected every attempt down to the rejection limit; filtered, those components are damped by
  // 1/(h γ|λ|) and the non-stiff ones are unchanged to O(h). Deterministic: the same factors on
  // every replay. A matrix-free solve that does not converge leaves the estimate unfiltered.
  void filter_error_estimate() {
    if (factored_diagonal_ == 0.0) return;  // no implicit stage factored in this attempt
    assign(update_, work_);
    if (matrix_.solve(update_, /*transposed=*/false)) assign(work_, update_);
  }

  // The stages and y_{n+1} of one attempt of size h from (t, y). Throws NewtonFailure.
  void solve_step(const Vector& y, double t, double h, const Vector& theta) {
    factored_diagonal_ = 0.0;  // the iteration matrix belongs to the previous attempt
    jacobian_ready_ = false;
    const int s = tableau_.stages;
    for (int i = 0; i < s; ++i) {
      stage_base(i, y, h);
      const double ti = t + tableau_.c[static_cast<std::size_t>(i)] * h;
      Vector& Yi = stages_[static_cast<std::size_t>(i)];
      if (!tableau_.implicit_stage(i)) {
        assign(Yi, base_);
      } else {
        solve_implicit_stage(i, y, t, ti, h, theta, Yi);
      }
      problem_.rhs(ti, Yi, theta, k_[static_cast<std::size_t>(i)]);
      ++counters_.rhs_evaluations;
    }
    assign(y_new_, y);
    for (int i = 0; i < s; ++i) {
      const double b = tableau_.b[static_cast<std::size_t>(i)];
      if (b != 0.0) add(y_new_, h * b, k_[static_cast<std::size_t>(i)]);
    }
  }

  // base_ = y + h Σ_{j<i} a_ij k_j.
  void stage_base(int i, const Vector& y, double h) {
    assign(base_, y);
    for (int j = 0; j < i; ++j) {
      const double a = tableau_.a_at(i, j);
      if (a != 0.0) add(base_, h * a, k_[static_cast<std::size_t>(j)]);
    }
  }

  // Y_i = base_ + h a_ii f(t_i, Y_i) by simplified Newton from the predictor
  // base_ + h a_ii k_{i−1} (y_n for a first stage). When that iteration fails, once more from the
  // previous stage's value Y_{i−1}, with the iteration matrix rebuilt there: the extrapolated
  // predictor is an explicit step, which lands far from the stage where h|λ| is huge (Robertson's
  // steps of 10⁵ near t = 3·10⁶, prescribed by an adaptive run at other rate constants), where
  // the previous stage is close. Only runs that would otherwise fail take the second try, and a
  // replay fails and retries alike (the same bits).
  void solve_implicit_stage(int i, const Vector& y, double t, double ti, double h,
                            const Vector& theta, Vector& Yi) {
    const double gamma = tableau_.a_at(i, i);
    if (i == 0) {
      assign(Yi, y);
    } else if constexpr (kEigen) {
      Yi = base_ + (h * gamma) * k_[static_cast<std::size_t>(i - 1)];
    } else {
      assign(Yi, base_);
      add(Yi, h * gamma, k_[static_cast<std::size_t>(i - 1)]);
    }
    const bool full_newton = matrix_.matrix_free();
    if (!full_newton) factor_iteration_matrix(y, t, h, gamma, theta);
    try {
      newton_iterations(i, ti, h, gamma, theta, Yi);
    } catch (const NewtonFailure& failure) {
      if (i == 0 || failure.stage < 0) throw;  // no other start; a singular matrix stands
      assign(Yi, stages_[static_cast<std::size_t>(i - 1)]);
      if (!full_newton) refactor_at(ti, Yi, h, gamma, theta);
      newton_iterations(i, ti, h, gamma, theta, Yi);
    }
  }

  // The simplified Newton iteration of stage i from Yi, with the factored iteration matrix. When
  // it contracts too slowly — the rate ‖Δ_k‖/‖Δ_{k−1}‖ is kRefreshRate or more, or at that rate it
  // would not reach the tolerance within max_iterations (the Jacobian at y_n can be far from the
  // one at the stage: Robertson's fast reactions have zero derivatives at y_2 = 0) — the
  // iteration matrix is rebuilt from the Jacobian at the current iterate, at most kMaxRefreshes
  // times. Throws NewtonFailure.
  void newton_iterations(int i, double ti, double h, double gamma, const Vector& theta,
                         Vector& Yi) {
    const bool full_newton = matrix_.matrix_free();
    double previous = 0.0;
    int refreshes = 0;
    for (int it = 1; it <= newton_.max_iterations; ++it) {
      problem_.rhs(ti, Yi, theta, work_);
      ++counters_.rhs_evaluations;
      residual(Yi, h * gamma);  // update_ = G(Z) = Z − base_ − h γ f(Z), f(Z) in work_
      if (full_newton) move_matrix_free_point_in_attempt(ti, Yi, h, gamma, theta);
      if (!matrix_.solve(update_, /*transposed=*/false))
        throw NewtonFailure{i, it, std::numeric_limits<double>::quiet_NaN()};
      if constexpr (kEigen)
        Yi -= update_;
      else
        Backend::axpy(-1.0, update_, Yi);
      ++implicit_counters_.newton_iterations;
      const double norm = Backend::error_norm(update_, Yi, Yi, newton_.rtol, newton_.atol);
      if (!std::isfinite(norm) || !Backend::all_finite(Yi)) throw NewtonFailure{i, it, norm};
      if (norm <= 1.0) return;
      const double rate = it >= 2 ? norm / previous : 0.0;
      // Iterations still needed at this rate to bring the update norm to 1.
      const double needed = rate > 0.0 && rate < 1.0 ? std::log(norm) / -std::log(rate) : 0.0;
      const bool too_slow = rate >= kRefreshRate || it + needed > newton_.max_iterations;
      if (it >= 2 && too_slow && refreshes < kMaxRefreshes && !full_newton) {
        ++refreshes;
        refactor_at(ti, Yi, h, gamma, theta);
      } else if (rate >= 1.0) {
        throw NewtonFailure{i, it, norm};  // diverging with a fresh Jacobian
      }
      previous = norm;
    }
    throw NewtonFailure{i, newton_.max_iterations, previous};
  }

  // update_ ← (Z − base_) − c·work_ (work_ holding f(Z)), in that order on every backend.
  void residual(const Vector& z, double c) {
    if constexpr (kEigen) {
      update_ = z - base_ - c * work_;
    } else {
      Backend::copy(z, update_);
      Backend::axpy(-1.0, base_, update_);
      Backend::axpy(-c, work_, update_);
    }
  }

  // Matrix-free solves: the stage matrix I − c J(t, z) for the next solve (for gmres nothing is
  // computed; gmres_ilu builds its preconditioner there).
  void move_matrix_free_point(double t, const Vector& z, double c, const Vector& theta) {
    matrix_.evaluate_jacobian(t, z, theta);
    matrix_.factor(c);
  }

  // The same within a step attempt: the first implicit stage's first iteration (γ not yet
  // factored_diagonal_) sets the coefficient h γ and builds gmres_ilu's preconditioner; later
  // iterations and stages of the attempt only move the products' point (γ is the same for all
  // stages of the ESDIRK and SDIRK tableaux, and a stage with another γ rebuilds). Decided by the
  // attempt alone, so a replayed step repeats it.
  void move_matrix_free_point_in_attempt(double t, const Vector& z, double h, double gamma,
                                         const Vector& theta) {
    if (factored_diagonal_ != gamma) {
      move_matrix_free_point(t, z, h * gamma, theta);
      factored_diagonal_ = gamma;
    } else {
      matrix_.move_point(t, z, theta);
    }
  }

  // The iteration matrix from the Jacobian at (t, z): lu_ = LU of I − h γ J(t, z).
  void refactor_at(double t, const Vector& z, double h, double gamma, const Vector& theta) {
    evaluate_jacobian(t, z, theta);
    factor(h, gamma);
  }

  void factor(double h, double gamma) {
    // A (numerically) singular iteration matrix: a smaller step moves it towards I.
    if (!factor_matrix(h, gamma)) throw NewtonFailure{-1, 0, 0.0};
    factored_diagonal_ = gamma;
  }

  // lu_ = LU of I − h γ J(t, y), J evaluated once per attempt; refactored only when γ changes.
  void factor_iteration_matrix(const Vector& y, double t, double h, double gamma,
                               const Vector& theta) {
    if (factored_diagonal_ == gamma) return;
    if (!jacobian_ready_) {
      evaluate_jacobian(t, y, theta);
      jacobian_ready_ = true;
    }
    factor(h, gamma);
  }

  // The reverse pass through the stages `Y` (Y[0 .. s)) of the step (t, h): see the top.
  void reverse(double t, double h, const Vector& theta, Vector& lambda, Vector& mu,
               const Vector* Y) {
    const int s = tableau_.stages;
    factored_diagonal_ = 0.0;        // the matrices factored below are not the forward ones
    preconditioner_diagonal_ = 0.0;  // built on first need in this step
    for (int i = s - 1; i >= 0; --i) {
      const double ti = t + tableau_.c[static_cast<std::size_t>(i)] * h;
      assign_scaled(u_, h * tableau_.b[static_cast<std::size_t>(i)], lambda);
      for (int j = i + 1; j < s; ++j) {
        const double a = tableau_.a_at(j, i);
        if (a != 0.0) add(u_, h * a, nu_[static_cast<std::size_t>(j)]);
      }
      if (tableau_.implicit_stage(i)) transposed_stage_solve(i, t, h, Y, theta);
      problem_.vjp(ti, Y[i], theta, u_, nu_[static_cast<std::size_t>(i)], mu_stage_);
      ++counters_.vjp_evaluations;
      if (p_ > 0) add(mu, 1.0, mu_stage_);
    }
    for (int i = 0; i < s; ++i) add(lambda, 1.0, nu_[static_cast<std::size_t>(i)]);
  }

  // u_ ← (I − h γ J_iᵀ)⁻¹ u_, J_i = J(t_i, Y_i) at the converged stage value (γ = a_ii), by
  // preconditioned iteration: M_p = I − h γ J(t_s, Y_s) (the last stage's Jacobian, factored once
  // per reversed step) solves it exactly for the last stage and approximately for the others,
  // which iterate u ← u + M_p⁻ᵀ (r − (I − h γ J_iᵀ) u), J_iᵀ u by the problem's vjp, until the
  // correction is below kAdjointTolerance of u (RMS). An iteration that stalls above round-off
  // (kAdjointFloor) or runs out falls back to factoring I − h γ J_i itself. One Jacobian and one
  // factorisation per step instead of one per implicit stage; the same numbers from a replayed
  // step and from kept stages, so every schedule keeps its bits.
  void transposed_stage_solve(int i, double t, double h, const Vector* Y, const Vector& theta) {
    const double gamma = tableau_.a_at(i, i);
    const double ti = t + tableau_.c[static_cast<std::size_t>(i)] * h;
    if (matrix_.matrix_free()) {
      // One coefficient (and gmres_ilu preconditioner, from the first stage reversed) per
      // reversed step and γ, as forward: the products at this stage.
      if (preconditioner_diagonal_ != gamma) {
        move_matrix_free_point(ti, Y[i], h * gamma, theta);
        preconditioner_diagonal_ = gamma;
      } else {
        matrix_.move_point(ti, Y[i], theta);
      }
      if (!matrix_.solve(u_, /*transposed=*/true))
        detail::fail<SolverError>("adjoint of the step at t = ", t, " (h = ", h,
                                  "): GMRES did not solve the transposed stage equations of stage ",
                                  i + 1, " to round-off (", matrix_.describe(),
                                  "; a direct solver, dense, band or sparse, does)");
      return;
    }
    if constexpr (kEigen) direct_transposed_stage_solve(i, t, h, Y, theta);
  }

  // transposed_stage_solve with a factored matrix (dense, band or sparse: the Eigen backend).
  void direct_transposed_stage_solve(int i, double t, double h, const Vector* Y,
                                     const Vector& theta) {
    const int last = tableau_.stages - 1;
    const double gamma = tableau_.a_at(i, i);
    const double ti = t + tableau_.c[static_cast<std::size_t>(i)] * h;
    rhs_ = u_;
    if (preconditioner_diagonal_ != gamma) {
      const double ts = t + tableau_.c[static_cast<std::size_t>(last)] * h;
      evaluate_jacobian(ts, Y[last], theta);
      if (!factor_matrix(h, gamma)) fail_singular_adjoint(t, h, last);
      preconditioner_diagonal_ = gamma;
    }
    u_ = rhs_;
    matrix_.solve(u_, /*transposed=*/true);
    if (i == last) return;  // M_p is this stage's own matrix
    double previous = std::numeric_limits<double>::infinity();
    for (int it = 0; it < kMaxAdjointIterations; ++it) {
      problem_.vjp(ti, Y[i], theta, u_, update_, mu_stage_);  // J_iᵀ u
      ++counters_.vjp_evaluations;
      ++implicit_counters_.adjoint_iterations;
      correction_ = rhs_ - u_ + (h * gamma) * update_;  // r − M_iᵀ u
      matrix_.solve(correction_, /*transposed=*/true);
      u_ += correction_;
      const double size = u_.norm(), change = correction_.norm();
      if (change <= kAdjointTolerance * size) return;
      if (change >= 0.5 * previous) {
        if (change <= kAdjointFloor * size) return;  // round-off: no more to gain
        break;
      }
      previous = change;
    }
    // Not converging: the exact factorisation at the stage (then M_p must be rebuilt).
    evaluate_jacobian(ti, Y[i], theta);
    if (!factor_matrix(h, gamma)) fail_singular_adjoint(t, h, i);
    preconditioner_diagonal_ = 0.0;
    ++implicit_counters_.adjoint_fallbacks;
    u_ = rhs_;
    matrix_.solve(u_, /*transposed=*/true);
  }

  [[noreturn]] void fail_singular_adjoint(double t, double h, int stage) const {
    detail::fail<SolverError>("adjoint of the step at t = ", t, " (h = ", h,
                              "): the matrix I - h a_ii J of stage ", stage + 1,
                              " is singular at its converged value");
  }

  // The adjoint's transposed stage solves (transposed_stage_solve): relative RMS size of the last
  // correction at convergence, the round-off floor accepted when the iteration stalls, and the
  // iterations allowed before the direct factorisation.
  static constexpr double kAdjointTolerance = 1e-14;
  static constexpr double kAdjointFloor = 1e-12;
  static constexpr int kMaxAdjointIterations = 20;
  // A Newton iteration contracting by less than this per update gets a fresh Jacobian.
  static constexpr double kRefreshRate = 0.5;
  static constexpr int kMaxRefreshes = 3;

  const P& problem_;
  ImplicitTableau tableau_;
  StepControl control_;
  NewtonOptions newton_;
  Index n_ = 0, p_ = 0;
  std::vector<Vector> stages_, k_, nu_;
  Vector base_, work_, update_, u_, mu_stage_, y_new_;
  // J, I − h γ J factored, solves (matrix-free GMRES alone on a backend other than Eigen).
  typename detail::StageMatrixFor<P>::type matrix_;
  bool jacobian_ready_ = false;
  double factored_diagonal_ = 0.0;        // γ of the forward iteration matrix in lu_ (0: none)
  double preconditioner_diagonal_ = 0.0;  // γ of the reverse sweep's M_p in lu_ (0: none)
  Vector rhs_, correction_;               // the transposed solve's right side and correction
  double h_ = 0.0;
  int substeps_ = 1;                    // substeps of the step advance() took last (fixed steps)
  std::vector<Vector> substep_starts_;  // their start states (solve_in_substeps)
  bool warned_substeps_ = false;        // warn_first_substeps has warned
  PiController controller_;
  StepperCounters counters_;
  mutable ImplicitCounters implicit_counters_;
  Index gmres_products_at_reset_ = 0;  // matrix_.gmres_products() at the last reset_counters()
};

}  // namespace rwd
