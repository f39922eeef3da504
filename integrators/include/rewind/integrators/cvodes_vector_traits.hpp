// rewind/integrators/cvodes_vector_traits.hpp — how rwd::CvodesIntervalStepper turns a backend's
// vectors into SUNDIALS N_Vectors and back: the one hook a backend provides to run CVODES.
//
//   template <> struct rwd::CvodesVectorTraits<MyBackend> {
//     using Vector = MyBackend::Vector;
//     static constexpr bool matrix_solvers = false;   // only the matrix-free GMRES solver
//     static N_Vector view(Vector& v, CvodesVectors kind, SUNContext context);   // no copy
//     static const Vector& in(N_Vector source, Vector& scratch);   // a callback's input
//     static Vector& out(N_Vector target, Vector& scratch);        // where it writes …
//     static void store(N_Vector target, const Vector& written);   // … and how it lands
//     static bool all_finite(const Vector& v);                     // the same answer everywhere
//     static void assign(Vector& v, const std::vector<double>& global_values);  // 1 or n values
//   };
//
// CVODES clones the vector handed to it for all of its own, so the N_Vector `view` makes decides
// what CVODES computes with. Callbacks (right-hand side, Jacobian products, vjp) receive CVODES's
// vectors and pass backend vectors to the problem: `in` returns the backend vector behind an
// N_Vector (or a copy in `scratch`), `out` the vector the problem writes to, `store` puts it into
// the N_Vector when `out` had to use the scratch. `all_finite` decides whether a callback reports
// a recoverable failure, so on a distributed backend it must be a collective: every rank must
// answer alike or CVODES's control flow would part ways between ranks.
//
// The Eigen backend's traits are here; the distributed backend's are in
// rewind/distributed/distributed_cvodes.hpp (include it to run the stepper over MPI ranks).
#pragma once

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>

#include <vector>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/eigen_nvector.hpp"

namespace rwd {

// Which N_Vector CVODES computes with (the Eigen backend; other backends have their own).
enum class CvodesVectors {
  rewind,  // rwd::sundials eigen vectors: optimised kernels, rhs/vjp called without copies
  serial,  // SUNDIALS' serial vector as packaged (Debian builds it unoptimised), for comparison
};

// Specialised per backend; a backend without a specialisation cannot run the CVODES stepper.
template <class Backend>
struct CvodesVectorTraits;

template <>
struct CvodesVectorTraits<EigenBackend> {
  using Vector = Eigen::VectorXd;
  // SUNDIALS' dense and band solvers take these vectors (array-backed, one process).
  static constexpr bool matrix_solvers = true;

  // An N_Vector over v's memory (no copy; SUNDIALS does not free it).
  static N_Vector view(Vector& v, CvodesVectors kind, SUNContext context) {
    if (kind == CvodesVectors::rewind) return sundials::make_eigen_nvector_view(v, context);
    return N_VMake_Serial(static_cast<sunindextype>(v.size()), v.data(), context);
  }

  // rewind's vectors are Eigen vectors already (no copy); serial ones, or rewind's pointed at
  // foreign memory, are copied through the scratch vector.
  static const Vector& in(N_Vector source, Vector& scratch) {
    if (sundials::is_eigen_nvector(source))
      if (const Vector* own = sundials::owned(source)) return *own;
    scratch = Eigen::Map<const Vector>(N_VGetArrayPointer(source), scratch.size());
    return scratch;
  }
  static Vector& out(N_Vector target, Vector& scratch) {
    if (sundials::is_eigen_nvector(target))
      if (Vector* own = sundials::owned_mutable(target)) return *own;
    return scratch;
  }
  static void store(N_Vector target, const Vector& source) {
    double* data = N_VGetArrayPointer(target);
    if (data != source.data()) Eigen::Map<Vector>(data, source.size()) = source;
  }
  static bool all_finite(const Vector& v) { return v.allFinite(); }

  // v (already of the global size) = the values, or the one value everywhere.
  static void assign(Vector& v, const std::vector<double>& values) {
    for (Index i = 0; i < v.size(); ++i)
      v[i] = values.size() == 1 ? values[0] : values[static_cast<std::size_t>(i)];
  }
};

}  // namespace rwd
