// rewind/integrators/lapack_band_solver.hpp — a SUNDIALS band linear solver that factors with
// LAPACK (dgbtrf/dgbtrs) instead of SUNDIALS' own band LU.
//
//   SUNMatrix A = SUNBandMatrix(n, mu, ml, ctx);
//   SUNLinearSolver S = rwd::sundials::make_lapack_band_solver(A, ctx);   // nullptr if unusable
//   CVodeSetLinearSolver(cvode, S, A);
//
// Why: with Debian's SUNDIALS (built unoptimised) the band LU factor and solve are ~89% of a
// band BDF run on a semi-discretised PDE (perf, 2D Brusselator). SUNDIALS' band storage is
// LAPACK's (column j holds rows j − (mu + ml) … j + ml, the first ml of them for fill-in), so
// the optimised library can factor the matrix in place. Partial pivoting as in SUNDIALS; a
// singular pivot is reported as SUNLS_LUFACT_FAIL (recoverable: CVODES retries with a smaller
// step). Only for matrices whose stored upper bandwidth is mu + ml (n > mu + ml); otherwise
// make_lapack_band_solver returns nullptr and the caller keeps SUNDIALS' band solver.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

namespace rwd::sundials {

SUNLinearSolver make_lapack_band_solver(SUNMatrix band_matrix, SUNContext context);

}  // namespace rwd::sundials
