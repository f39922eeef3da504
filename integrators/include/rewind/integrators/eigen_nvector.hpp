// rewind/integrators/eigen_nvector.hpp — rewind's N_Vector (rwd::sundials::BackendNVector,
// rewind/integrators/cvodes_nvector.hpp) over the Eigen backend: contiguous host doubles.
//
//   SUNContext ctx = …;
//   N_Vector v = rwd::sundials::make_eigen_nvector(n, ctx);     // zero-filled, owns its storage
//   Eigen::Map<Eigen::VectorXd> view = rwd::sundials::map(v);   // no copy
//   const Eigen::VectorXd* own = rwd::sundials::owned(v);       // the storage, when v uses it
//
// Why: Debian's SUNDIALS is built without optimisation, and CVODES spends much of its time in
// vector kernels (linear sums, weighted norms); these run compiled with the project's flags
// instead, on rwd::thread_count() threads for vectors long enough (rewind/parallel.hpp). It also
// lets the stepper hand CVODES's vectors to the user's rhs/vjp (which take Eigen vectors)
// without copying: `owned(v)` is the Eigen::VectorXd behind v.
//
// Layout and identity: the data are one contiguous array of doubles, reachable through
// N_VGetArrayPointer, and N_VSetArrayPointer may point a vector elsewhere (CVODES's
// difference-quotient Jacobians point a vector at a matrix column). The vector reports the
// serial vector's ID, because SUNDIALS' dense and band linear solvers accept only array-backed
// vector IDs and touch vectors only through N_VGetArrayPointer — which this vector provides with
// the same meaning.
//
// Reductions are deterministic (fixed order), so replays are bit-identical. The dot product and
// the sums behind the WRMS, masked WRMS, weighted L2 and L1 norms are Eigen's own vectorised
// reductions (eigen_nvector.cpp), not the generic fixed-order sum of the other backends: every
// CVODES result on this vector has been computed in Eigen's order, and a different order would
// move the last bits of every BDF gradient.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>

#include <Eigen/Dense>

#include "rewind/types.hpp"

namespace rwd::sundials {

// A new vector of n zeros that owns its storage; destroy with N_VDestroy.
N_Vector make_eigen_nvector(Index n, SUNContext context);

// A vector over v's values (no copy; v must outlive it and keep its size); owned(view) is &v.
N_Vector make_eigen_nvector_view(Eigen::VectorXd& v, SUNContext context);

// A vector over someone else's n doubles (no storage of its own; clones get their own).
N_Vector make_eigen_nvector_view(double* data, Index n, SUNContext context);

// The vector's values, wherever its array pointer points.
Eigen::Map<Eigen::VectorXd> map(N_Vector v);

// The Eigen vector that stores v's values, or nullptr when v's array pointer was moved elsewhere.
const Eigen::VectorXd* owned(N_Vector v);
Eigen::VectorXd* owned_mutable(N_Vector v);

// True for vectors made here (and their clones).
bool is_eigen_nvector(N_Vector v);

}  // namespace rwd::sundials
