// rewind/integrators/backend_gmres.hpp — rwd::StageGmres on any backend that runs CVODES
// (rewind/integrators/cvodes_vector_traits.hpp): restarted GMRES (SUNDIALS' SPGMR, modified
// Gram–Schmidt, no preconditioner) over the backend's own N_Vector, for the matrix-free stage
// solves of the implicit engines on a state split across MPI ranks (the distributed backend's
// traits are in rewind/distributed/distributed_cvodes.hpp: include it first).
//
//   rwd::BackendGmres<rwd::DistributedBackend> gmres(like);   // like: shaped as the state
//   const auto outcome = gmres.solve(x, 1e-10, [&](const Vector& v, Vector& av) { … });
//
// The same contract as StageGmres (x holds b on entry and the solution on return, from a zero
// guess; `tolerance` relative to ‖b‖₂). Its reductions are the backend's, which on the
// distributed backend fold in a fixed global order: the same bits for any number of ranks.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_nvector.h>
#include <sunlinsol/sunlinsol_spgmr.h>

#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/cvodes_vector_traits.hpp"
#include "rewind/integrators/stage_gmres.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <class Backend>
class BackendGmres {
  using Traits = CvodesVectorTraits<Backend>;

 public:
  using Vector = typename Backend::Vector;
  // out = A v (out is not v).
  using Product = std::function<void(const Vector& v, Vector& out)>;
  using Outcome = StageGmres::Outcome;

  // Krylov vectors shaped like `like`, a space of krylov_dimension of them, restarted at most
  // max_restarts times. Error when SUNDIALS cannot make the solver.
  explicit BackendGmres(const Vector& like, int krylov_dimension = 30, int max_restarts = 10)
      : state_(std::make_unique<State>()) {
    if (krylov_dimension < 1 || max_restarts < 0)
      detail::fail<InvalidArgument>("BackendGmres: Krylov dimension ", krylov_dimension, " and ",
                                    max_restarts, " restarts (need >= 1 and >= 0)");
    State& s = *state_;
    s.like = like;
    s.scratch_in = like;
    s.scratch_out = like;
    s.aliased = like;
    s.right_side = like;
    if (SUNContext_Create(nullptr, &s.context) != 0)
      detail::fail<Error>("BackendGmres: SUNContext_Create failed");
    s.like_view = Traits::view(s.like, CvodesVectors::rewind, s.context);
    s.solver = SUNLinSol_SPGMR(s.like_view, SUN_PREC_NONE, krylov_dimension, s.context);
    if (!s.like_view || !s.solver)
      detail::fail<Error>("BackendGmres: SUNDIALS could not make SPGMR");
    if (SUNLinSol_SPGMRSetGSType(s.solver, SUN_MODIFIED_GS) != 0 ||
        SUNLinSol_SPGMRSetMaxRestarts(s.solver, max_restarts) != 0 ||
        SUNLinSolSetATimes(s.solver, &s, &State::times) != 0 ||
        SUNLinSolSetScalingVectors(s.solver, nullptr, nullptr) != 0 ||
        SUNLinSolInitialize(s.solver) != 0)
      detail::fail<Error>("BackendGmres: SPGMR's set-up failed");
  }

  // x ← A⁻¹ x (see the top of this file).
  Outcome solve(Vector& x, double tolerance, const Product& product) {
    State& s = *state_;
    if (!(tolerance > 0.0))
      detail::fail<InvalidArgument>("BackendGmres: tolerance ", tolerance, " must be > 0");
    Outcome outcome;
    Backend::copy(x, s.right_side);
    outcome.right_side = norm(s.right_side);
    Backend::fill(x, 0.0);
    if (outcome.right_side == 0.0) {
      outcome.converged = true;
      return outcome;
    }
    s.product = &product;
    s.product_failure = nullptr;
    N_Vector x_view = Traits::view(x, CvodesVectors::rewind, s.context);
    N_Vector b_view = Traits::view(s.right_side, CvodesVectors::rewind, s.context);
    SUNLinSolSetZeroGuess(s.solver, SUNTRUE);
    int status = SUNLinSolSetup(s.solver, nullptr);
    if (status == 0)
      status = SUNLinSolSolve(s.solver, nullptr, x_view, b_view, tolerance * outcome.right_side);
    N_VDestroy(x_view);
    N_VDestroy(b_view);
    s.product = nullptr;
    if (s.product_failure) std::rethrow_exception(s.product_failure);
    if (status < 0) detail::fail<Error>("BackendGmres: SPGMR failed (status ", status, ")");
    outcome.converged = status == SUNLS_SUCCESS;
    outcome.iterations = SUNLinSolNumIters(s.solver);
    outcome.residual = SUNLinSolResNorm(s.solver);
    return outcome;
  }

 private:
  // ‖x‖₂: Eigen's own on the Eigen backend (the bits rwd::StageGmres has always had), the
  // backend's fixed-order dot product on another.
  static double norm(const Vector& x) {
    if constexpr (std::is_same_v<Backend, EigenBackend>)
      return x.norm();
    else
      return std::sqrt(Backend::dot(x, x));
  }

  struct State {
    SUNContext context = nullptr;
    Vector like, scratch_in, scratch_out, aliased, right_side;
    N_Vector like_view = nullptr;  // the template SPGMR clones its Krylov vectors from
    SUNLinearSolver solver = nullptr;
    const Product* product = nullptr;    // during solve()
    std::exception_ptr product_failure;  // an exception the product threw, rethrown by solve()

    ~State() {
      if (solver) SUNLinSolFree(solver);
      if (like_view) N_VDestroy(like_view);
      if (context) SUNContext_Free(&context);
    }

    // SPGMR's ATimes: z = A v.
    static int times(void* data, N_Vector v, N_Vector z) {
      auto& self = *static_cast<State*>(data);
      try {
        const Vector& in = Traits::in(v, self.scratch_in);
        Vector& out = Traits::out(z, self.scratch_out);
        if (&out != &in) {
          (*self.product)(in, out);
        } else {  // z is v: the product's out is never its v
          (*self.product)(in, self.aliased);
          Backend::copy(self.aliased, out);
        }
        Traits::store(z, out);
        return 0;
      } catch (...) {
        self.product_failure = std::current_exception();
        return -1;
      }
    }
  };
  std::unique_ptr<State> state_;  // a stable address for SPGMR's callback
};

}  // namespace rwd
