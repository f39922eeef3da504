// integrators/src/lapack_band_solver.cpp — see rewind/integrators/lapack_band_solver.hpp.
#include "rewind/integrators/lapack_band_solver.hpp"

#include <sunmatrix/sunmatrix_band.h>

#include <cstddef>
#include <new>
#include <vector>

extern "C" {
// LAPACK (Fortran): LU of a general band matrix, and the solve with it. The trailing size_t is
// the hidden length of the character argument that gfortran passes.
void dgbtrf_(const int* m, const int* n, const int* kl, const int* ku, double* ab, const int* ldab,
             int* ipiv, int* info);
void dgbtrs_(const char* trans, const int* n, const int* kl, const int* ku, const int* nrhs,
             const double* ab, const int* ldab, const int* ipiv, double* b, const int* ldb,
             int* info, std::size_t trans_length);
}

namespace rwd::sundials {
namespace {

struct Content {
  std::vector<int> pivots;
  sunindextype last_flag = 0;
};

Content* content(SUNLinearSolver s) {
  return static_cast<Content*>(s->content);
}

SUNLinearSolver_Type get_type(SUNLinearSolver) {
  return SUNLINEARSOLVER_DIRECT;
}
SUNLinearSolver_ID get_id(SUNLinearSolver) {
  return SUNLINEARSOLVER_CUSTOM;
}
int initialize(SUNLinearSolver s) {
  content(s)->last_flag = 0;
  return SUNLS_SUCCESS;
}

int setup(SUNLinearSolver s, SUNMatrix a) {
  const int n = static_cast<int>(SUNBandMatrix_Columns(a));
  const int kl = static_cast<int>(SUNBandMatrix_LowerBandwidth(a));
  const int ku = static_cast<int>(SUNBandMatrix_UpperBandwidth(a));
  const int ldab = static_cast<int>(SUNBandMatrix_LDim(a));
  Content* c = content(s);
  c->pivots.resize(static_cast<std::size_t>(n));
  int info = 0;
  dgbtrf_(&n, &n, &kl, &ku, SUNBandMatrix_Data(a), &ldab, c->pivots.data(), &info);
  c->last_flag = info;
  if (info > 0) return SUNLS_LUFACT_FAIL;  // a zero pivot: singular iteration matrix
  return info < 0 ? SUNLS_PACKAGE_FAIL_UNREC : SUNLS_SUCCESS;
}

int solve(SUNLinearSolver s, SUNMatrix a, N_Vector x, N_Vector b, realtype) {
  N_VScale(1.0, b, x);
  const int n = static_cast<int>(SUNBandMatrix_Columns(a));
  const int kl = static_cast<int>(SUNBandMatrix_LowerBandwidth(a));
  const int ku = static_cast<int>(SUNBandMatrix_UpperBandwidth(a));
  const int ldab = static_cast<int>(SUNBandMatrix_LDim(a));
  const int one = 1;
  int info = 0;
  dgbtrs_("N", &n, &kl, &ku, &one, SUNBandMatrix_Data(a), &ldab, content(s)->pivots.data(),
          N_VGetArrayPointer(x), &n, &info, 1);
  content(s)->last_flag = info;
  return info == 0 ? SUNLS_SUCCESS : SUNLS_PACKAGE_FAIL_UNREC;
}

sunindextype last_flag(SUNLinearSolver s) {
  return content(s)->last_flag;
}

int space(SUNLinearSolver s, long* real_words, long* integer_words) {
  *real_words = 0;
  *integer_words = static_cast<long>(content(s)->pivots.size());
  return SUNLS_SUCCESS;
}

int free_solver(SUNLinearSolver s) {
  if (!s) return SUNLS_SUCCESS;
  delete content(s);
  s->content = nullptr;
  SUNLinSolFreeEmpty(s);
  return SUNLS_SUCCESS;
}

}  // namespace

SUNLinearSolver make_lapack_band_solver(SUNMatrix a, SUNContext context) {
  if (SUNMatGetID(a) != SUNMATRIX_BAND) return nullptr;
  // LAPACK's layout needs room for the full fill-in: stored upper bandwidth = mu + ml.
  if (SUNBandMatrix_StoredUpperBandwidth(a) !=
      SUNBandMatrix_UpperBandwidth(a) + SUNBandMatrix_LowerBandwidth(a))
    return nullptr;
  SUNLinearSolver s = SUNLinSolNewEmpty(context);
  if (!s) return nullptr;
  s->ops->gettype = get_type;
  s->ops->getid = get_id;
  s->ops->initialize = initialize;
  s->ops->setup = setup;
  s->ops->solve = solve;
  s->ops->lastflag = last_flag;
  s->ops->space = space;
  s->ops->free = free_solver;
  s->content = new (std::nothrow) Content;
  if (!s->content) {
    SUNLinSolFreeEmpty(s);
    return nullptr;
  }
  return s;
}

}  // namespace rwd::sundials
