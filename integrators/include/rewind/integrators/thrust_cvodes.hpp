// rewind/integrators/thrust_cvodes.hpp — CVODES over rwd::ThrustBackend: rewind's N_Vector
// (rwd::sundials::BackendNVector, rewind/integrators/cvodes_nvector.hpp) with its values in a
// thrust::device_vector (the GPU's memory under CUDA), and the CvodesVectorTraits that let
// rwd::CvodesIntervalStepper run BDF with the state on the device.
//
//   #include "rewind/integrators/thrust_cvodes.hpp"   // in a .cu file (CUDA) or a .cpp (CPP/OMP)
//   rwd::DeviceBrusselator2D<rwd::ThrustBackend> problem(1024);
//   rwd::CvodesOptions options;
//   options.linear_solver = rwd::CvodesLinearSolver::gmres;     // the only one over device vectors
//   rwd::CvodesIntervalStepper stepper(problem, options, grid);
//   N_Vector v = rwd::ThrustNVector::view(y, ctx);              // the N_Vector alone, no copy
//
// CVODES itself runs on the host and calls the vector operations; each is one kernel launch over
// the device values (a linear sum, a scaling, …), and each reduction (dot products, weighted
// norms, minima) one fixed-order reduction whose result comes back to the host
// (rewind/backend/thrust_fixed_reduction.hpp): the same bits for every launch configuration and
// thread count, so a replayed interval takes exactly the steps it took the first time and the
// gradient is the same bits for every schedule. Only the matrix-free GMRES solver runs: SUNDIALS'
// dense and band solvers read the values through a host array pointer.
//
// Fused operations: N_VLinearCombination (up to kMaxCombinationTerms terms in one kernel, longer
// ones as a chain), N_VScaleAddMulti and N_VDotProdMulti. The element-wise kernels are the
// N_Vector's own, with their term counts fixed, rather than routed through ThrustBackend's
// general linear_combination: routed through it, a BDF run on the CPP device system was slower
// with the same bits (bench/results/code_comments.md).
// N_VGetArrayPointer returns the device pointer (for CUDA, memory the host cannot read); no
// SUNDIALS module rewind uses with GMRES reads through it. N_VSetArrayPointer is refused.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "rewind/backend/thrust_backend.hpp"
#include "rewind/host_device.hpp"
#include "rewind/integrators/cvodes_nvector.hpp"
#include "rewind/integrators/cvodes_vector_traits.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace sundials {

// Σ_i term(i) as the Sums<1> ThrustBackend::sum_index folds.
template <class Term>
struct AsSums {
  Term term;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    Sums<1> s;
    s.v[0] = term(i);
    return s;
  }
};

template <>
struct NVectorKernels<ThrustBackend> {
  using Vector = ThrustBackend::Vector;
  static constexpr const char* name = ThrustBackend::name;
  static constexpr N_Vector_ID id = SUNDIALS_NVEC_CUSTOM;
  static constexpr bool host_arrays = false;  // device memory under CUDA (see the top)

  static double* values(Vector& v) { return ThrustBackend::data(v); }
  static Index local_size(const Vector& v) { return ThrustBackend::size(v); }
  static Index global_size(const Vector& v) { return ThrustBackend::size(v); }
  static Vector like(const Vector&, Index n) { return ThrustBackend::zeros(n); }

  // One kernel launch per operation; every reduction one fixed-order reduction on the device
  // (rewind/backend/thrust_fixed_reduction.hpp) whose result comes back to the host.
  template <class F>
  static void for_each(Index n, const F& f) {
    ThrustBackend::for_each_index(n, f);
  }
  template <class T>
  static double sum(const Vector&, Index n, const T& term) {
    return ThrustBackend::sum_index<1>(n, AsSums<T>{term}).v[0];
  }
  template <class M>
  static double minimum(const Vector&, Index n, const M& value, double start) {
    return thrust_detail::guarded("N_Vector minimum", [&] {
      return thrust_detail::fixed_reduce(n, value, nvector_kernels::NanMin{}, start);
    });
  }
  template <class M>
  static double maximum(const Vector&, Index n, const M& value, double start) {
    return thrust_detail::guarded("N_Vector maximum", [&] {
      return thrust_detail::fixed_reduce(n, value, nvector_kernels::NanMax{}, start);
    });
  }
};

}  // namespace sundials

inline namespace REWIND_THRUST_SYSTEM_NAMESPACE {
// rewind's N_Vector over this translation unit's Thrust device system.
using ThrustNVector = sundials::BackendNVector<ThrustBackend>;
}  // namespace REWIND_THRUST_SYSTEM_NAMESPACE

template <>
struct CvodesVectorTraits<ThrustBackend> {
  using Vector = ThrustBackend::Vector;
  static constexpr bool matrix_solvers = false;  // GMRES only (see the top)
  // The diagonally implicit engine runs on these vectors with matrix-free GMRES
  // (rwd::MatrixFreeStageMatrix over this N_Vector; tests/adjoint/cvodes_device_vector_test.cpp).
  static constexpr bool matrix_free_implicit = true;

  static N_Vector view(Vector& v, CvodesVectors, SUNContext context) {
    return ThrustNVector::view(v, context);
  }
  // CVODES clones the vectors it is given, so every vector a callback sees is one of these.
  static const Vector& in(N_Vector source, Vector&) { return own(source); }
  static Vector& out(N_Vector target, Vector&) { return own(target); }
  static void store(N_Vector target, const Vector& written) {
    Vector& v = own(target);
    if (&v != &written) ThrustBackend::copy(written, v);
  }
  static bool all_finite(const Vector& v) { return ThrustBackend::all_finite(v); }
  // v (already of the full size) = the values, or the one value everywhere.
  static void assign(Vector& v, const std::vector<double>& values) {
    if (values.size() == 1) {
      ThrustBackend::fill(v, values[0]);
      return;
    }
    ThrustBackend::copy_from_host(std::span<const double>(values), v);
  }

 private:
  static Vector& own(N_Vector v) {
    Vector* own = ThrustNVector::vector(v);
    if (!own) {
      std::fprintf(stderr, "rewind: CVODES handed a foreign N_Vector to a device callback\n");
      std::abort();
    }
    return *own;
  }
};

}  // namespace rwd
