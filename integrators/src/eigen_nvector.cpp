// integrators/src/eigen_nvector.cpp — see rewind/integrators/eigen_nvector.hpp: the Eigen
// backend's kernels for rwd::sundials::BackendNVector.
#include "rewind/integrators/eigen_nvector.hpp"

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/cvodes_nvector.hpp"
#include "rewind/parallel.hpp"

namespace rwd::sundials {

template <>
struct NVectorKernels<EigenBackend> {
  using Vector = Eigen::VectorXd;
  static constexpr const char* name = "Eigen";
  static constexpr N_Vector_ID id = SUNDIALS_NVEC_SERIAL;  // array-backed; see the header
  static constexpr bool host_arrays = true;

  static double* values(Vector& v) { return v.data(); }
  static Index local_size(const Vector& v) { return static_cast<Index>(v.size()); }
  static Index global_size(const Vector& v) { return static_cast<Index>(v.size()); }
  // A clone's values are left unset, as SUNDIALS' own serial vector leaves them: CVODES writes
  // every vector it clones before reading it.
  static Vector like(const Vector&, Index n) { return Vector(static_cast<Eigen::Index>(n)); }

  // Element-wise kernels over contiguous ranges (one per thread for long vectors), the kernel
  // copied into the loop: faster on a BDF run than one call per index through
  // EigenBackend::for_each_index, with the same bits (measured in bench/results/nvector.md).
  template <class F>
  static void for_each(Index n, const F& f) {
    detail::for_each_range(n, [f](Index begin, Index end) {
      for (Index i = begin; i < end; ++i) f(i);
    });
  }
  // Ranges for the fused linear combination's term-by-term passes (cvodes_nvector.hpp).
  template <class F>
  static void for_each_range(Index n, const F& f) {
    detail::for_each_range(n, f);
  }
  // The counts of the inverse and constraint tests (exact in any order).
  template <class T>
  static double sum(const Vector&, Index n, const T& term) {
    return detail::ordered_element_sum(n, term);
  }
  template <class M>
  static double minimum(const Vector&, Index n, const M& value, double start) {
    double m = start;
    for (Index i = 0; i < n; ++i) m = nvector_kernels::NanMin{}(m, value(i));
    return m;
  }
  template <class M>
  static double maximum(const Vector&, Index n, const M& value, double start) {
    double m = start;
    for (Index i = 0; i < n; ++i) m = nvector_kernels::NanMax{}(m, value(i));
    return m;
  }

  // Eigen's own reductions (SIMD packets in Eigen's fixed order), kept because every BDF result
  // on this vector has been computed with them (see the header).
  using ConstMap = Eigen::Map<const Eigen::VectorXd>;
  static ConstMap in(const double* x, Index n) { return ConstMap(x, static_cast<Eigen::Index>(n)); }
  static double dot(const double* x, const double* y, Index n) { return in(x, n).dot(in(y, n)); }
  static double wrms_sum(const double* x, const double* w, Index n) {
    return in(x, n).cwiseProduct(in(w, n)).squaredNorm();
  }
  static double wrms_mask_sum(const double* x, const double* w, const double* id, Index n) {
    const auto mask = (in(id, n).array() > 0.0).cast<double>();
    return (in(x, n).array() * in(w, n).array() * mask).square().sum();
  }
  static double l1_norm(const double* x, Index n) { return in(x, n).cwiseAbs().sum(); }
};

namespace {
using EigenNVector = BackendNVector<EigenBackend>;
}  // namespace

N_Vector make_eigen_nvector(Index n, SUNContext context) {
  return EigenNVector::make(Eigen::VectorXd(), n, context);
}

N_Vector make_eigen_nvector_view(Eigen::VectorXd& v, SUNContext context) {
  return EigenNVector::view(v, context);
}

N_Vector make_eigen_nvector_view(double* data, Index n, SUNContext context) {
  return EigenNVector::view_array(data, n, context);
}

Eigen::Map<Eigen::VectorXd> map(N_Vector v) {
  return Eigen::Map<Eigen::VectorXd>(EigenNVector::values(v),
                                     static_cast<Eigen::Index>(EigenNVector::local_length(v)));
}

const Eigen::VectorXd* owned(N_Vector v) {
  return EigenNVector::vector(v);
}
Eigen::VectorXd* owned_mutable(N_Vector v) {
  return EigenNVector::vector(v);
}

bool is_eigen_nvector(N_Vector v) {
  return EigenNVector::owns(v);
}

}  // namespace rwd::sundials
