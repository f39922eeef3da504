// rewind/distributed/distributed_nvector.hpp — rewind's N_Vector (rwd::sundials::BackendNVector,
// rewind/integrators/cvodes_nvector.hpp) over rwd::DistributedVector, so CVODES
// (rwd::CvodesIntervalStepper with the GMRES linear solver) runs across MPI ranks with gradients
// whose bits do not depend on the number of ranks or threads.
//
//   rwd::DistributedVector y = problem.default_initial_state();    // this rank's rows
//   N_Vector v = rwd::sundials::make_distributed_nvector_view(y, ctx);   // no copy
//   rwd::DistributedVector* same = rwd::sundials::distributed_vector(v);  // &y
//   N_VDestroy(v);                                                   // y stays
//
// Element-wise operations (linear sums, products, the fused linear combinations CVODES's
// predictor and corrector use) work on this rank's values, on its threads. Reductions over a
// split vector (dot products, the weighted RMS norms of CVODES's error test and Newton iteration,
// SPGMR's Gram–Schmidt products, L1) are collectives through the vector's rwd::RowLayout: one
// partial per global row (four interleaved lanes inside it, as DistributedBackend's own dot and
// norms), gathered and added in global row order (RowLayout::fold_rows), so every rank gets the
// same value and 1, 2 or 4 ranks the same bits. Maxima and minima are exact in any order; they
// are gathered and taken on every rank. A replicated vector (θ's gradient, the backward
// quadrature) reduces locally, in the Eigen backend's blocks: every rank holds the same values,
// so it computes the same result.
//
// CVODES's control flow depends only on reduced values, identical on every rank, so every rank
// makes the same sequence of collective calls: no rank waits for a collective another skips.
//
// N_VGetLength is the global length (CVODES's iterative linear-solver interface converts WRMS
// to L2 norms with it); N_VGetCommunicator is the address of the layout's MPI_Comm (null for a
// replicated vector); N_VGetArrayPointer is this rank's values. Pointing a vector at foreign
// memory (N_VSetArrayPointer, which only SUNDIALS' dense and band difference-quotient Jacobians
// do) is refused: those solvers hold the whole matrix on one process and do not distribute.
// The vector's ID is SUNDIALS_NVEC_CUSTOM. The op-by-op conformance suite runs on 1–4 ranks in
// tests/distributed/distributed_nvector_test.cpp.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>

#include "rewind/distributed/distributed_backend.hpp"

namespace rwd::sundials {

// An N_Vector over v's values (no copy; v must outlive it and keep its size). Clones made by
// SUNDIALS own their values and keep v's layout (split or replicated).
N_Vector make_distributed_nvector_view(DistributedVector& v, SUNContext context);

// A new vector shaped like `like` (same layout, zeros) that owns its values.
N_Vector make_distributed_nvector(const DistributedVector& like, SUNContext context);

// The DistributedVector behind a vector made here (or a clone of one); nullptr for any other.
DistributedVector* distributed_vector(N_Vector v);

// True for vectors made here and their clones.
bool is_distributed_nvector(N_Vector v);

}  // namespace rwd::sundials
