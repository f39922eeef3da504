// integrators/src/stage_gmres.cpp — see rewind/integrators/stage_gmres.hpp.
#include "rewind/integrators/stage_gmres.hpp"

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_nvector.h>
#include <sunlinsol/sunlinsol_spgmr.h>

#include <exception>

#include "rewind/error.hpp"
#include "rewind/integrators/eigen_nvector.hpp"

namespace rwd {

struct StageGmres::Spgmr {
  Index n = 0;
  SUNContext context = nullptr;
  N_Vector like = nullptr;  // the template SPGMR clones its Krylov vectors from
  SUNLinearSolver solver = nullptr;
  const Product* product = nullptr;    // during solve()
  Eigen::VectorXd v_copy, out_copy;    // for vectors SPGMR hands over without Eigen storage
  Eigen::VectorXd right_side;          // b, kept while x is overwritten
  std::exception_ptr product_failure;  // an exception the product threw, rethrown by solve()

  ~Spgmr() {
    if (solver) SUNLinSolFree(solver);
    if (like) N_VDestroy(like);
    if (context) SUNContext_Free(&context);
  }

  // SPGMR's ATimes: z = A v.
  static int times(void* data, N_Vector v, N_Vector z) {
    auto& self = *static_cast<Spgmr*>(data);
    try {
      const Eigen::VectorXd* in = sundials::owned(v);
      if (!in) {
        self.v_copy = sundials::map(v);
        in = &self.v_copy;
      }
      Eigen::VectorXd* out = sundials::owned_mutable(z);
      if (out && out != in) {
        (*self.product)(*in, *out);
      } else {
        (*self.product)(*in, self.out_copy);
        sundials::map(z) = self.out_copy;
      }
      return 0;
    } catch (...) {
      self.product_failure = std::current_exception();
      return -1;
    }
  }
};

StageGmres::StageGmres(Index n, int krylov_dimension, int max_restarts)
    : spgmr_(std::make_unique<Spgmr>()) {
  if (n < 1 || krylov_dimension < 1 || max_restarts < 0)
    detail::fail<InvalidArgument>("StageGmres: ", n, " unknowns, Krylov dimension ",
                                  krylov_dimension, " and ", max_restarts,
                                  " restarts (need n >= 1, dimension >= 1, restarts >= 0)");
  Spgmr& s = *spgmr_;
  s.n = n;
  if (SUNContext_Create(nullptr, &s.context) != 0)
    detail::fail<Error>("StageGmres: SUNContext_Create failed");
  s.like = sundials::make_eigen_nvector(n, s.context);
  s.solver = SUNLinSol_SPGMR(s.like, SUN_PREC_NONE, krylov_dimension, s.context);
  if (!s.like || !s.solver) detail::fail<Error>("StageGmres: SUNDIALS could not make SPGMR");
  if (SUNLinSol_SPGMRSetGSType(s.solver, SUN_MODIFIED_GS) != 0 ||
      SUNLinSol_SPGMRSetMaxRestarts(s.solver, max_restarts) != 0 ||
      SUNLinSolSetATimes(s.solver, &s, &Spgmr::times) != 0 ||
      SUNLinSolSetScalingVectors(s.solver, nullptr, nullptr) != 0 ||
      SUNLinSolInitialize(s.solver) != 0)
    detail::fail<Error>("StageGmres: SPGMR's set-up failed");
}

StageGmres::Outcome StageGmres::solve(Eigen::VectorXd& x, double tolerance,
                                      const Product& product) {
  Spgmr& s = *spgmr_;
  if (x.size() != s.n)
    detail::fail<InvalidArgument>("StageGmres: a right side of ", x.size(), " values for ", s.n,
                                  " unknowns");
  if (!(tolerance > 0.0))
    detail::fail<InvalidArgument>("StageGmres: tolerance ", tolerance, " must be > 0");
  Outcome outcome;
  s.right_side = x;
  outcome.right_side = s.right_side.norm();
  x.setZero();
  if (outcome.right_side == 0.0) {
    outcome.converged = true;
    return outcome;
  }
  s.product = &product;
  s.product_failure = nullptr;
  N_Vector x_view = sundials::make_eigen_nvector_view(x, s.context);
  N_Vector b_view = sundials::make_eigen_nvector_view(s.right_side, s.context);
  SUNLinSolSetZeroGuess(s.solver, SUNTRUE);
  int status = SUNLinSolSetup(s.solver, nullptr);
  if (status == 0)
    status = SUNLinSolSolve(s.solver, nullptr, x_view, b_view, tolerance * outcome.right_side);
  N_VDestroy(x_view);
  N_VDestroy(b_view);
  s.product = nullptr;
  if (s.product_failure) std::rethrow_exception(s.product_failure);
  if (status < 0) detail::fail<Error>("StageGmres: SPGMR failed (status ", status, ")");
  outcome.converged = status == SUNLS_SUCCESS;
  outcome.iterations = SUNLinSolNumIters(s.solver);
  outcome.residual = SUNLinSolResNorm(s.solver);
  return outcome;
}

StageGmres::~StageGmres() = default;
StageGmres::StageGmres(StageGmres&&) noexcept = default;
StageGmres& StageGmres::operator=(StageGmres&&) noexcept = default;

}  // namespace rwd
