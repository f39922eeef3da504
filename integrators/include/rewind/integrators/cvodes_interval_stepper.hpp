// rewind/integrators/cvodes_interval_stepper.hpp — variable-order, variable-step BDF (SUNDIALS
// CVODES) on macro-intervals, with CVODES's own adjoint inside each interval.
//
//   rwd::Robertson<> model;
//   rwd::CvodesOptions bdf;                                    // rtol, atol per component, …
//   bdf.rtol = 1e-6;
//   bdf.atol = {1e-8, 1e-14, 1e-6, 1e-6};
//   rwd::CvodesIntervalStepper stepper(model, bdf, rwd::IntervalGrid{0.0, 4e7, /*intervals=*/40});
//   rwd::CheckpointedAdjoint driver(stepper, objective);      // revolve over the 40 intervals
//   auto result = driver.run(y0, theta, rwd::revolve_schedule(4));
//
// Why intervals. CVODES integrates with its own step sizes and order; rewind's schedules need
// "steps" that can be replayed from a snapshot bit for bit. One step of this stepper is one
// macro-interval [τ_n, τ_{n+1}] of a fixed grid, integrated by a CVODES run that starts fresh at
// τ_n (a new solver: order 1, a new initial step) and stops exactly at τ_{n+1} (stop time). The
// forward sweep and every replay therefore restart CVODES identically, and the state at each
// boundary is a pure function of the state at the previous one — the drift monitor checks it.
// A snapshot is the state at a boundary (the carry holds τ_n and the interval index).
//
// Each interval gets a new CVODES solver (not CVodeReInit, which keeps linear-solver history):
// the cost is a few allocations per interval, the gain replays that are bit-identical whatever
// ran before them — schedule independence, checked in tests/integrators/.
//
// The adjoint step of interval n is CVODES's: CVodeF integrates the interval again from y_n
// storing its interpolation data (CVODES checkpoints every `steps_per_adjoint_checkpoint`
// internal steps, Hermite interpolation), then CVodeB solves the adjoint ODE backwards
//   dλ/dt = −(∂f/∂y)ᵀ λ,   λ(τ_{n+1}) = λ_{n+1},
// with the backward quadrature  μ += ∫_{τ_n}^{τ_{n+1}} (∂f/∂θ)ᵀ λ dt, both with the problem's vjp,
// and hands λ(τ_n) to the next interval down. Memory is one interval's interpolation data. The
// result is the continuous adjoint: accurate to the solver tolerances, not to round-off — check
// it against finite differences with a tolerance to match (see tests/integrators/).
//
// Linear solver: dense (SUNDIALS' dense matrix + LU), with the problem's Jacobian when it has
// `void jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const`
// (J overwritten, n × n), else CVODES's difference quotients; the backward problem uses −Jᵀ.
// Or band (CvodesLinearSolver::band) for semi-discretised PDEs: difference-quotient Jacobians
// with column grouping, half-bandwidths from the options or the problem's band_width(), factored
// by LAPACK (rwd::sundials::make_lapack_band_solver) rather than Debian's unoptimised band LU. A
// problem that declares its band Jacobian — `band_upper()`, `band_lower()` and
// `band_jacobian(t, y, θ, bands)` in LAPACK band storage, bands(upper + i − j, j) = ∂f_i/∂y_j, as
// rwd::auto_problem gives a model with a `jacobian_band` — gives the band solver that Jacobian
// instead of difference quotients (the backward problem −Jᵀ), and its half-bandwidths where the
// options give none; a model loaded from a plugin (rwd::PluginModel) does so when it declares its
// band at run time (declares_band()), and without one and without widths in the options the band
// solver is refused, naming the model and how to declare a band. Or sparse
// (CvodesLinearSolver::sparse): KLU on SUNDIALS' compressed sparse matrix with the problem's
// `sparsity()` and `jacobian_values(t, y, θ, values)` — as a stencil model's problem gives them —
// the backward problem's −Jᵀ from the same pattern read by columns
// (rewind/integrators/cvodes_sparse_jacobian.hpp; rewind built with KLU, REWIND_WITH_KLU).
//
// Backends. The stepper runs on the problem's backend through rwd::CvodesVectorTraits<Backend>
// (rewind/integrators/cvodes_vector_traits.hpp): the Eigen backend's vectors here; MPI ranks with
// rwd::DistributedBackend through rewind/distributed/distributed_cvodes.hpp, where every
// reduction CVODES and SPGMR make is a deterministic collective, so 1, 2 or 4 ranks compute the
// same gradient bits. A backend whose vectors are not one array on one process takes only the
// matrix-free GMRES solver: dense, band and sparse are refused before any work.
//
// Errors: a CVODES failure (Newton convergence, too much work, step size underflow, …) in a
// forward or backward solve throws rwd::SolverError naming the interval, its time span, the
// time reached and CVODES's reason; nothing partial is returned.
//
// Settings CVODES mishandles are refused: in 6.4.1 its polynomial interpolation crashes when the
// checkpoint spacing is shorter than the method order, so only Hermite interpolation is used and
// `steps_per_adjoint_checkpoint` must be ≥ 6 (more than the maximum BDF order, 5).
//
// Capabilities (rewind/integrators/stepper_concepts.hpp): TimeStepper, SelfDescribingStepper.
#pragma once

#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_band.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_band.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/cvodes_sparse_jacobian.hpp"
#include "rewind/integrators/cvodes_vector_traits.hpp"
#include "rewind/integrators/declared_jacobian.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"  // StepperCounters
#include "rewind/integrators/lapack_band_solver.hpp"
#include "rewind/problem.hpp"

namespace rwd {

// The linear solver inside CVODES's Newton iteration.
enum class CvodesLinearSolver {
  dense,   // SUNDIALS dense LU; the problem's jacobian() if it has one, else difference quotients
  band,    // SUNDIALS band LU with the problem's band_jacobian() if it has one, else
           // difference-quotient Jacobians (column grouping: 2·width + 1 right-hand sides per
           // Jacobian); widths from the options or the problem's band_width() or
           // band_upper()/band_lower()
  gmres,   // matrix-free SPGMR, no preconditioner: forward Jacobian-vector products from the
           // problem's `jvp(t, y, θ, v, out)` if it has one, else CVODES's difference quotients;
           // the backward solve's (−∂f/∂y)ᵀ v is the problem's exact vjp
  sparse,  // KLU sparse LU with the problem's `sparsity()` and `jacobian_values()` (required;
           // rewind/integrators/cvodes_sparse_jacobian.hpp), the backward problem's −Jᵀ from the
           // same pattern; needs rewind built with KLU (SuiteSparse)
};

inline const char* linear_solver_name(CvodesLinearSolver solver) {
  switch (solver) {
    case CvodesLinearSolver::dense:
      return "dense";
    case CvodesLinearSolver::band:
      return "band";
    case CvodesLinearSolver::gmres:
      return "gmres";
    case CvodesLinearSolver::sparse:
      return "sparse";
  }
  return "?";
}

struct CvodesOptions {
  double rtol = 1e-6;
  std::vector<double> atol = {1e-8};  // one value for every component, or one per component
  long max_steps_per_interval = 100000;
  int max_order = 5;  // BDF order limit, 1..5
  // Adjoint tolerances (the backward solve), and the backward quadrature's absolute tolerance.
  double rtol_adjoint = 1e-6;
  double atol_adjoint = 1e-8;
  double atol_quadrature = 1e-6;
  // CVODES's own checkpoints inside an interval being reversed (CVodeAdjInit's Nd).
  long steps_per_adjoint_checkpoint = 100;
  CvodesLinearSolver linear_solver = CvodesLinearSolver::dense;
  CvodesVectors vectors = CvodesVectors::rewind;
  bool band_lapack =
      true;  // band: factor with LAPACK (false: SUNDIALS' own band LU, for comparison)
  int gmres_krylov_dimension = 30;  // gmres: the Krylov subspace size (SPGMR's maxl)
  Index band_upper = -1,
        band_lower = -1;  // band: half-bandwidths of ∂f/∂y (−1: problem.band_width())

  void validate(Index n) const {
    if (!(rtol > 0.0) || !(rtol_adjoint > 0.0))
      detail::fail<InvalidArgument>("CVODES: relative tolerances must be > 0 (rtol = ", rtol,
                                    ", adjoint ", rtol_adjoint, ")");
    if (atol.size() != 1 && static_cast<Index>(atol.size()) != n)
      detail::fail<InvalidArgument>("CVODES: ", atol.size(),
                                    " absolute tolerances given; give 1 or one per component (", n,
                                    ")");
    for (double a : atol)
      if (!(a >= 0.0))
        detail::fail<InvalidArgument>("CVODES: absolute tolerance ", a, " must be >= 0");
    if (!(atol_adjoint > 0.0) || !(atol_quadrature > 0.0))
      detail::fail<InvalidArgument>(
          "CVODES: adjoint and quadrature absolute tolerances must be > 0");
    if (max_steps_per_interval < 1)
      detail::fail<InvalidArgument>("CVODES: max_steps_per_interval must be >= 1");
    if (max_order < 1 || max_order > 5)
      detail::fail<InvalidArgument>("CVODES: BDF max_order = ", max_order, " must be in 1..5");
    if (steps_per_adjoint_checkpoint < 6)
      detail::fail<InvalidArgument>(
          "CVODES: steps_per_adjoint_checkpoint = ", steps_per_adjoint_checkpoint,
          " must be >= 6: CVODES 6.4.1 crashes when its checkpoint spacing is shorter "
          "than the method order");
  }
};

// The macro-interval grid: [t0, t_final] cut into `intervals` equal pieces.
struct IntervalGrid {
  double t0 = 0.0;
  double t_final = 1.0;
  Index intervals = 1;
  double boundary(Index n) const {
    return n == intervals
               ? t_final
               : t0 + (t_final - t0) * static_cast<double>(n) / static_cast<double>(intervals);
  }
};

namespace detail {

// Owns a SUNDIALS object and frees it with the matching function.
template <class T, void (*Free)(T)>
struct SundialsHandle {
  T value = nullptr;
  SundialsHandle() = default;
  explicit SundialsHandle(T v) : value(v) {}
  ~SundialsHandle() { reset(nullptr); }
  void reset(T v) {
    if (value) Free(value);
    value = v;
  }
  SundialsHandle(const SundialsHandle&) = delete;
  SundialsHandle& operator=(const SundialsHandle&) = delete;
};
inline void free_context(SUNContext c) {
  SUNContext_Free(&c);
}
inline void free_cvode(void* m) {
  CVodeFree(&m);
}
inline void free_matrix(SUNMatrix m) {
  SUNMatDestroy(m);
}
inline void free_solver(SUNLinearSolver s) {
  SUNLinSolFree(s);
}
inline void free_vector(N_Vector v) {
  N_VDestroy(v);
}

}  // namespace detail

template <Problem P>
class CvodesIntervalStepper {
 public:
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;
  using Traits = CvodesVectorTraits<Backend>;  // include the backend's traits header to use it

  // The problem must outlive the stepper.
  CvodesIntervalStepper(const P& problem, CvodesOptions options, IntervalGrid grid)
      : problem_(problem),
        options_(std::move(options)),
        grid_(grid),
        n_(problem.state_size()),
        p_(problem.parameter_size()) {
    options_.validate(n_);
    if (!Traits::matrix_solvers && options_.linear_solver != CvodesLinearSolver::gmres)
      detail::fail<InvalidArgument>(
          "CVODES on the ", Backend::name, " backend: the ",
          linear_solver_name(options_.linear_solver),
          " linear solver does not distribute (it holds the whole matrix on one process); use "
          "the matrix-free GMRES solver (CvodesLinearSolver::gmres)");
    if (!Traits::matrix_solvers && options_.vectors == CvodesVectors::serial)
      detail::fail<InvalidArgument>("CVODES on the ", Backend::name,
                                    " backend computes with rewind's own vectors "
                                    "(CvodesVectors::rewind); SUNDIALS' serial vector is one "
                                    "process's array");
    if (grid_.intervals < 1)
      detail::fail<InvalidArgument>("CVODES: the grid needs at least one interval");
    if (!(grid_.t_final > grid_.t0))
      detail::fail<InvalidArgument>("CVODES: t_final must be after t0");
    y_ = Backend::zeros(n_);
    f_ = Backend::zeros(n_);
    v_ = Backend::zeros(n_);
    out_y_ = Backend::zeros(n_);
    quad_out_y_ = Backend::zeros(n_);
    quad_out_y_theta_ = Backend::zeros(p_);
    out_theta_ = Backend::zeros(p_);
    theta_ = Backend::zeros(p_);
    setup();
  }
  CvodesIntervalStepper(const CvodesIntervalStepper&) = delete;
  CvodesIntervalStepper& operator=(const CvodesIntervalStepper&) = delete;

  const P& problem() const { return problem_; }
  Index state_size() const { return n_; }
  Index parameter_size() const { return p_; }
  Index planned_steps() const { return grid_.intervals; }
  const IntervalGrid& grid() const { return grid_; }
  const CvodesOptions& options() const { return options_; }
  const StepperCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }
  bool finished(const Carry& c) const { return c.step >= grid_.intervals; }
  std::string describe() const {
    std::ostringstream out;
    out << "cvodes bdf (" << linear_solver_name(options_.linear_solver)
        << "), rtol = " << options_.rtol << ", " << grid_.intervals << " intervals on [" << grid_.t0
        << ", " << grid_.t_final << "]";
    return out.str();
  }

  Carry initial_carry(const Vector& y0, const Vector&) const {
    if (Backend::size(y0) != n_)
      detail::fail<InvalidArgument>("CVODES: y0 has ", Backend::size(y0), " values, the problem ",
                                    n_);
    Carry c;
    c.t = grid_.t0;
    c.step = 0;
    return c;
  }

  // One interval forward: y_n → y_{n+1}.
  void step(Vector& y, Carry& carry, const Vector& theta) {
    const Index n = carry.step;
    const double t_end = grid_.boundary(n + 1);
    theta_ = theta;
    last_message_.clear();
    const VectorView state(wrap(y));  // freed on every path, a failed solve's throw included
    start_solver(carry.t, state.value, n);
    check(CVodeSetStopTime(cvode_.value, t_end), n, carry.t, "CVodeSetStopTime");
    double reached = carry.t;
    check(CVode(cvode_.value, t_end, state.value, &reached, CV_NORMAL), n, reached,
          "forward solve");
    collect_forward_statistics();
    carry.t = t_end;
    carry.step = n + 1;
    ++counters_.steps;
  }

  // Interval n backwards: λ = λ(τ_{n+1}) in, λ(τ_n) out; mu += ∫ (∂f/∂θ)ᵀ λ dt over the interval.
  void adjoint_step(const Vector& y_n, const Carry& carry_n, const Vector& theta, Vector& lambda,
                    Vector& mu) {
    const Index n = carry_n.step;
    const double t_begin = carry_n.t, t_end = grid_.boundary(n + 1);
    theta_ = theta;
    last_message_.clear();
    Vector y = y_n;
    {
      const VectorView state(wrap(y));
      start_solver(t_begin, state.value, n);
      check(CVodeAdjInit(cvode_.value, options_.steps_per_adjoint_checkpoint, CV_HERMITE), n,
            t_begin, "CVodeAdjInit");
      check(CVodeSetStopTime(cvode_.value, t_end), n, t_begin, "CVodeSetStopTime");
      double reached = t_begin;
      int checkpoints = 0;
      check(CVodeF(cvode_.value, t_end, state.value, &reached, CV_NORMAL, &checkpoints), n, reached,
            "forward solve (adjoint pass)");
    }
    collect_forward_statistics();

    const VectorView adjoint_view(wrap(lambda));
    N_Vector adjoint = adjoint_view.value;
    Vector quadrature = Backend::zeros(p_);
    const VectorView q_view(wrap(quadrature));
    N_Vector q = q_view.value;
    {
      check(CVodeCreateB(cvode_.value, CV_BDF, &which_), n, t_end, "CVodeCreateB");
      check(CVodeInitB(cvode_.value, which_, &backward_rhs, t_end, adjoint), n, t_end,
            "CVodeInitB");
      check(CVodeSStolerancesB(cvode_.value, which_, options_.rtol_adjoint, options_.atol_adjoint),
            n, t_end, "tolerances");
      check(CVodeSetUserDataB(cvode_.value, which_, this), n, t_end, "user data");
      check(CVodeSetMaxNumStepsB(cvode_.value, which_, options_.max_steps_per_interval), n, t_end,
            "max steps");
      if (options_.linear_solver == CvodesLinearSolver::gmres) {
        solver_b_.reset(SUNLinSol_SPGMR(adjoint, SUN_PREC_NONE, options_.gmres_krylov_dimension,
                                        context_.value));
      } else if (options_.linear_solver == CvodesLinearSolver::band) {
        // −(∂f/∂y)ᵀ: the upper and lower widths swap.
        matrix_b_.reset(SUNBandMatrix(n_, lower_, upper_, context_.value));
        solver_b_.reset(band_solver(adjoint, matrix_b_.value));
      } else if (options_.linear_solver == CvodesLinearSolver::sparse) {
        matrix_b_.reset(sparse_pattern_.make_matrix(/*transposed=*/true, context_.value));
        if (matrix_b_.value)
          solver_b_.reset(sundials::make_klu_solver(adjoint, matrix_b_.value, context_.value));
      } else {
        matrix_b_.reset(SUNDenseMatrix(n_, n_, context_.value));
        solver_b_.reset(SUNLinSol_Dense(adjoint, matrix_b_.value, context_.value));
      }
      check(CVodeSetLinearSolverB(cvode_.value, which_, solver_b_.value, matrix_b_.value), n, t_end,
            "linear solver");
      if (options_.linear_solver == CvodesLinearSolver::gmres)
        check(CVodeSetJacTimesB(cvode_.value, which_, nullptr, &backward_jacobian_times), n, t_end,
              "Jacobian products");
      if constexpr (detail::HasJacobian<P>)
        if (options_.linear_solver == CvodesLinearSolver::dense)
          check(CVodeSetJacFnB(cvode_.value, which_, &backward_jacobian), n, t_end, "Jacobian");
      if constexpr (detail::HasBandJacobian<P>)
        if (options_.linear_solver == CvodesLinearSolver::band &&
            detail::gives_band_jacobian(problem_))
          check(CVodeSetJacFnB(cvode_.value, which_, &backward_band_jacobian), n, t_end,
                "band Jacobian");
      if constexpr (detail::HasSparseJacobian<P>)
        if (options_.linear_solver == CvodesLinearSolver::sparse)
          check(CVodeSetJacFnB(cvode_.value, which_, &backward_sparse_jacobian), n, t_end,
                "sparse Jacobian");
      check(CVodeQuadInitB(cvode_.value, which_, &backward_quadrature, q), n, t_end,
            "CVodeQuadInitB");
      check(CVodeSetQuadErrConB(cvode_.value, which_, SUNTRUE), n, t_end,
            "quadrature error control");
      check(CVodeQuadSStolerancesB(cvode_.value, which_, options_.rtol_adjoint,
                                   options_.atol_quadrature),
            n, t_end, "quadrature tolerances");
    }
    check(CVodeB(cvode_.value, t_begin, CV_NORMAL), n, t_begin, "backward (adjoint) solve");
    double t_back = t_end;
    check(CVodeGetB(cvode_.value, which_, &t_back, adjoint), n, t_back, "CVodeGetB");
    check(CVodeGetQuadB(cvode_.value, which_, &t_back, q), n, t_back, "CVodeGetQuadB");
    Backend::axpy(1.0, quadrature, mu);  // mu + 1·q: the bits of mu + q
    void* backward_mem = CVodeGetAdjCVodeBmem(cvode_.value, which_);
    long rhs_b = 0, quad_b = 0;
    CVodeGetNumRhsEvals(backward_mem, &rhs_b);  // a new backward problem per interval
    CVodeGetQuadNumRhsEvals(backward_mem, &quad_b);
    counters_.vjp_evaluations += rhs_b + quad_b;
    ++counters_.adjoint_steps;
  }

 private:
  // An N_Vector over a backend vector's memory (no copy; SUNDIALS does not free it). CVODES
  // clones it for its own vectors, so the kind chosen here is the kind it computes with.
  // Owned by a VectorView where it is made, so that a failure (check() throws) frees it too.
  N_Vector wrap(Vector& v) const { return Traits::view(v, options_.vectors, context_.value); }
  using VectorView = detail::SundialsHandle<N_Vector, detail::free_vector>;

  // CVodeGetReturnFlagName returns a string the caller must free.
  static std::string return_flag_name(int flag) {
    char* name = CVodeGetReturnFlagName(flag);
    if (!name) return "flag " + std::to_string(flag);
    std::string copy(name);
    std::free(name);
    return copy;
  }

  void setup() {
    SUNContext context = nullptr;
    if (SUNContext_Create(nullptr, &context) != 0)
      detail::fail<SolverError>("CVODES: cannot create a SUNDIALS context");
    context_.value = context;
    atol_ = Backend::zeros(n_);
    Traits::assign(atol_, options_.atol);
    if (options_.linear_solver == CvodesLinearSolver::sparse) {
      const std::string refusal =
          sundials::sparse_solver_refusal(sundials::kKluAvailable, detail::HasSparseJacobian<P>);
      if (!refusal.empty()) detail::fail<InvalidArgument>(refusal);
      if constexpr (detail::HasSparseJacobian<P>)
        sparse_pattern_ = sundials::SparseJacobianPattern(problem_.sparsity(), n_);
    }
    if (options_.linear_solver == CvodesLinearSolver::band) {
      upper_ = options_.band_upper, lower_ = options_.band_lower;
      if constexpr (detail::HasBandWidth<P>) {
        if (upper_ < 0) upper_ = problem_.band_width();
        if (lower_ < 0) lower_ = problem_.band_width();
      }
      if constexpr (detail::HasBandJacobian<P>) {
        if (detail::gives_band_jacobian(problem_)) {
          if (upper_ < 0) upper_ = problem_.band_upper();
          if (lower_ < 0) lower_ = problem_.band_lower();
          if (upper_ < problem_.band_upper() || lower_ < problem_.band_lower())
            detail::fail<InvalidArgument>(
                "CVODES band solver: half-bandwidths (", upper_, ", ", lower_,
                ") are narrower than the problem's band Jacobian (", problem_.band_upper(), ", ",
                problem_.band_lower(), "); give at least those, or none");
        }
      }
      // A model loaded from a plugin without a declared band, and no widths given.
      if ((upper_ < 0 || lower_ < 0) && detail::RuntimeBandProblem<P>)
        detail::fail<InvalidArgument>("CVODES band solver: the problem states no band",
                                      detail::band_refusal(problem_));
      if (upper_ < 0 || lower_ < 0 || upper_ >= n_ || lower_ >= n_)
        detail::fail<InvalidArgument>(
            "CVODES band solver: half-bandwidths (", upper_, ", ", lower_,
            ") must be given (or the problem's band_width()) and below the size ", n_);
    }
  }

  // A new CVODES solver at (t, state) for one interval. CVodeReInit would keep history that
  // shapes the next solve (the linear solver's saved Jacobian and its age, the Newton
  // convergence-rate estimate), so a replay after other work would take different steps; a
  // fresh solver per interval makes an interval's result a function of its start alone.
  void start_solver(double t, N_Vector state, Index interval) {
    cvode_.reset(nullptr);
    solver_b_.reset(nullptr);
    matrix_b_.reset(nullptr);
    solver_.reset(nullptr);
    matrix_.reset(nullptr);
    cvode_.reset(CVodeCreate(CV_BDF, context_.value));
    if (!cvode_.value) detail::fail<SolverError>("CVODES: CVodeCreate failed");
    check(CVodeSetErrHandlerFn(cvode_.value, &error_handler, this), interval, t, "error handler");
    check(CVodeInit(cvode_.value, &forward_rhs, t, state), interval, t, "CVodeInit");
    {
      const VectorView atol(wrap(atol_));
      check(CVodeSVtolerances(cvode_.value, options_.rtol, atol.value), interval, t, "tolerances");
    }
    check(CVodeSetUserData(cvode_.value, this), interval, t, "user data");
    check(CVodeSetMaxNumSteps(cvode_.value, options_.max_steps_per_interval), interval, t,
          "max steps");
    check(CVodeSetMaxOrd(cvode_.value, options_.max_order), interval, t, "max order");
    if (options_.linear_solver == CvodesLinearSolver::gmres) {
      solver_.reset(
          SUNLinSol_SPGMR(state, SUN_PREC_NONE, options_.gmres_krylov_dimension, context_.value));
    } else if (options_.linear_solver == CvodesLinearSolver::band) {
      matrix_.reset(SUNBandMatrix(n_, upper_, lower_, context_.value));
      solver_.reset(band_solver(state, matrix_.value));
    } else if (options_.linear_solver == CvodesLinearSolver::sparse) {
      matrix_.reset(sparse_pattern_.make_matrix(/*transposed=*/false, context_.value));
      if (matrix_.value)
        solver_.reset(sundials::make_klu_solver(state, matrix_.value, context_.value));
    } else {
      matrix_.reset(SUNDenseMatrix(n_, n_, context_.value));
      solver_.reset(SUNLinSol_Dense(state, matrix_.value, context_.value));
    }
    if (!solver_.value || (!matrix_.value && options_.linear_solver != CvodesLinearSolver::gmres))
      detail::fail<SolverError>("CVODES: cannot create the linear solver");
    check(CVodeSetLinearSolver(cvode_.value, solver_.value, matrix_.value), interval, t,
          "linear solver");
    if constexpr (detail::HasJvp<P>)
      if (options_.linear_solver == CvodesLinearSolver::gmres)
        check(CVodeSetJacTimes(cvode_.value, nullptr, &forward_jacobian_times), interval, t,
              "Jacobian products");
    if constexpr (detail::HasJacobian<P>)
      if (options_.linear_solver == CvodesLinearSolver::dense)
        check(CVodeSetJacFn(cvode_.value, &forward_jacobian), interval, t, "Jacobian");
    if constexpr (detail::HasBandJacobian<P>)
      if (options_.linear_solver == CvodesLinearSolver::band &&
          detail::gives_band_jacobian(problem_))
        check(CVodeSetJacFn(cvode_.value, &forward_band_jacobian), interval, t, "band Jacobian");
    if constexpr (detail::HasSparseJacobian<P>)
      if (options_.linear_solver == CvodesLinearSolver::sparse)
        check(CVodeSetJacFn(cvode_.value, &forward_sparse_jacobian), interval, t,
              "sparse Jacobian");
  }

  SUNLinearSolver band_solver(N_Vector like, SUNMatrix matrix) const {
    if (options_.band_lapack)
      if (SUNLinearSolver lapack = sundials::make_lapack_band_solver(matrix, context_.value))
        return lapack;
    return SUNLinSol_Band(like, matrix, context_.value);
  }

  void collect_forward_statistics() {
    long rhs = 0, failures = 0;
    CVodeGetNumRhsEvals(cvode_.value, &rhs);
    CVodeGetNumErrTestFails(cvode_.value, &failures);
    counters_.rhs_evaluations += rhs;  // a new solver per interval: its counts are this interval's
    counters_.rejected_attempts += failures;
  }

  void check(int flag, Index interval, double t, const char* what) const {
    if (flag >= 0) return;
    std::ostringstream out;
    out << "CVODES " << what << " failed in interval " << interval << " ["
        << grid_.boundary(interval) << ", " << grid_.boundary(interval + 1) << "] at t = " << t
        << ": " << return_flag_name(flag);
    if (!last_message_.empty()) out << " (" << last_message_ << ")";
    throw SolverError(out.str());
  }

  static void error_handler(int, const char* module, const char* function, char* message,
                            void* data) {
    static_cast<CvodesIntervalStepper*>(data)->last_message_ =
        std::string(module) + "::" + function + ": " + message;
  }

  // Callbacks hand CVODES's vectors to the problem as backend vectors (without a copy where the
  // traits can). A non-finite result is a recoverable failure (CVODES retries with a smaller
  // step); on a distributed backend the verdict is a collective, the same on every rank.
  static const Vector& in(N_Vector source, Vector& scratch) { return Traits::in(source, scratch); }
  static Vector& out(N_Vector target, Vector& scratch) { return Traits::out(target, scratch); }
  static void store(N_Vector target, const Vector& source) { Traits::store(target, source); }
  static bool finite(const Vector& v) { return Traits::all_finite(v); }

  static int forward_rhs(double t, N_Vector y, N_Vector ydot, void* data) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    Vector& f = out(ydot, self->f_);
    self->problem_.rhs(t, in(y, self->y_), self->theta_, f);
    store(ydot, f);
    return finite(f) ? 0 : 1;  // 1: recoverable, CVODES retries with a smaller step
  }
  static int forward_jacobian(double t, N_Vector y, N_Vector, SUNMatrix J, void* data, N_Vector,
                              N_Vector, N_Vector) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    if constexpr (detail::HasJacobian<P>) {
      self->jacobian_.resize(self->n_, self->n_);
      self->problem_.jacobian(t, in(y, self->y_), self->theta_, self->jacobian_);
      // SUNDIALS' dense matrix is column-major like Eigen's.
      Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(J), self->n_, self->n_) = self->jacobian_;
      return self->jacobian_.allFinite() ? 0 : 1;
    }
    return -1;
  }
  // The problem's band Jacobian into SUNDIALS' band matrix (entry (i, j) of the forward
  // Jacobian, or (j, i) negated for the backward problem's −Jᵀ); entries outside the problem's
  // band stay 0 where the matrix is wider.
  bool fill_band(double t, N_Vector y, SUNMatrix target, bool transpose_negated) {
    if constexpr (detail::HasBandJacobian<P>) {
      problem_.band_jacobian(t, in(y, y_), theta_, band_);
      SUNMatZero(target);
      const Index upper = problem_.band_upper(), lower = problem_.band_lower();
      for (Index j = 0; j < n_; ++j) {
        const Index first = std::max<Index>(0, j - upper);
        const Index last = std::min<Index>(n_ - 1, j + lower);
        for (Index i = first; i <= last; ++i) {
          const double entry = band_(upper + i - j, j);
          if (transpose_negated)
            SM_ELEMENT_B(target, j, i) = -entry;
          else
            SM_ELEMENT_B(target, i, j) = entry;
        }
      }
      return band_.allFinite();
    }
    return false;
  }
  static int forward_band_jacobian(double t, N_Vector y, N_Vector, SUNMatrix J, void* data,
                                   N_Vector, N_Vector, N_Vector) {
    return static_cast<CvodesIntervalStepper*>(data)->fill_band(t, y, J, false) ? 0 : 1;
  }
  static int backward_band_jacobian(double t, N_Vector y, N_Vector, N_Vector, SUNMatrix JB,
                                    void* data, N_Vector, N_Vector, N_Vector) {
    return static_cast<CvodesIntervalStepper*>(data)->fill_band(t, y, JB, true) ? 0 : 1;
  }
  // The problem's sparse Jacobian: J for the forward problem, −Jᵀ (the same pattern read by
  // columns, the values negated) for the backward one.
  static int forward_sparse_jacobian(double t, N_Vector y, N_Vector, SUNMatrix J, void* data,
                                     N_Vector, N_Vector, N_Vector) {
    return static_cast<CvodesIntervalStepper*>(data)->fill_sparse(t, y, J, false) ? 0 : 1;
  }
  static int backward_sparse_jacobian(double t, N_Vector y, N_Vector, N_Vector, SUNMatrix JB,
                                      void* data, N_Vector, N_Vector, N_Vector) {
    return static_cast<CvodesIntervalStepper*>(data)->fill_sparse(t, y, JB, true) ? 0 : 1;
  }
  bool fill_sparse(double t, N_Vector y, SUNMatrix target, bool negated) {
    if constexpr (detail::HasSparseJacobian<P>)
      return sundials::fill_sparse_jacobian(problem_, sparse_pattern_, t, in(y, y_), theta_, target,
                                            negated);
    return false;
  }
  // dλ/dt = −(∂f/∂y)ᵀ λ.
  static int backward_rhs(double t, N_Vector y, N_Vector yB, N_Vector yBdot, void* data) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    Vector& dl = out(yBdot, self->out_y_);
    self->problem_.vjp(t, in(y, self->y_), self->theta_, in(yB, self->v_), dl, self->out_theta_);
    Backend::scale(-1.0, dl);  // exact negation
    store(yBdot, dl);
    return finite(dl) ? 0 : 1;
  }
  static int backward_jacobian(double t, N_Vector y, N_Vector, N_Vector, SUNMatrix JB, void* data,
                               N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    if constexpr (detail::HasJacobian<P>) {
      self->jacobian_.resize(self->n_, self->n_);
      self->problem_.jacobian(t, in(y, self->y_), self->theta_, self->jacobian_);
      Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(JB), self->n_, self->n_) =
          -self->jacobian_.transpose();
      return self->jacobian_.allFinite() ? 0 : 1;
    }
    return -1;
  }
  // Jv for the forward Newton iteration (gmres), from the problem's jvp.
  static int forward_jacobian_times(N_Vector v, N_Vector Jv, double t, N_Vector y, N_Vector,
                                    void* data, N_Vector) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    if constexpr (detail::HasJvp<P>) {
      Vector& out_v = out(Jv, self->f_);
      self->problem_.jvp(t, in(y, self->y_), self->theta_, in(v, self->v_), out_v);
      store(Jv, out_v);
      return finite(out_v) ? 0 : 1;
    }
    return -1;
  }
  // The backward system's Jacobian is −(∂f/∂y)ᵀ: its products are the problem's exact vjp.
  static int backward_jacobian_times(N_Vector vB, N_Vector JvB, double t, N_Vector y, N_Vector,
                                     N_Vector, void* data, N_Vector) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    Vector& product = out(JvB, self->out_y_);
    self->problem_.vjp(t, in(y, self->y_), self->theta_, in(vB, self->v_), product,
                       self->quad_out_y_theta_);
    Backend::scale(-1.0, product);
    store(JvB, product);
    return finite(product) ? 0 : 1;
  }

  // Integrated backwards from τ_{n+1} (where it is 0) to τ_n: dq/dt = −(∂f/∂θ)ᵀ λ gives
  // q(τ_n) = ∫_{τ_n}^{τ_{n+1}} (∂f/∂θ)ᵀ λ dt.
  static int backward_quadrature(double t, N_Vector y, N_Vector yB, N_Vector qBdot, void* data) {
    auto* self = static_cast<CvodesIntervalStepper*>(data);
    Vector& dq = out(qBdot, self->out_theta_);
    self->problem_.vjp(t, in(y, self->y_), self->theta_, in(yB, self->v_), self->quad_out_y_, dq);
    Backend::scale(-1.0, dq);
    store(qBdot, dq);
    return finite(dq) ? 0 : 1;
  }

  const P& problem_;
  CvodesOptions options_;
  IntervalGrid grid_;
  Index n_, p_;
  Vector y_, f_, v_, out_y_, out_theta_, quad_out_y_, quad_out_y_theta_, theta_, atol_;
  Eigen::MatrixXd jacobian_;
  Eigen::MatrixXd band_;                // the problem's band Jacobian, LAPACK band storage
  sunindextype upper_ = 0, lower_ = 0;  // band half-bandwidths
  sundials::SparseJacobianPattern sparse_pattern_;  // sparse: the problem's, read once
  // Destroyed in reverse order: CVODES first, then its solvers and matrices, the context last.
  detail::SundialsHandle<SUNContext, detail::free_context> context_;
  detail::SundialsHandle<SUNMatrix, detail::free_matrix> matrix_, matrix_b_;
  detail::SundialsHandle<SUNLinearSolver, detail::free_solver> solver_, solver_b_;
  detail::SundialsHandle<void*, detail::free_cvode> cvode_;
  int which_ = -1;
  StepperCounters counters_;
  std::string last_message_;
};

}  // namespace rwd
