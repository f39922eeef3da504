// src/distributed/src/distributed_nvector.cpp — see rewind/distributed/distributed_nvector.hpp:
// the distributed backend's kernels for rwd::sundials::BackendNVector.
#include "rewind/distributed/distributed_nvector.hpp"

#include <mpi.h>

#include <span>
#include <vector>

#include "rewind/integrators/cvodes_nvector.hpp"
#include "rewind/parallel.hpp"

namespace rwd::sundials {

template <>
struct NVectorKernels<DistributedBackend> {
  using Vector = DistributedVector;
  static constexpr const char* name = "distributed";
  static constexpr N_Vector_ID id = SUNDIALS_NVEC_CUSTOM;
  static constexpr bool host_arrays = false;  // a matrix of the whole state on one process is
                                              // what splitting the state avoids
  using CommunicatorHandle = MPI_Comm;

  static double* values(Vector& v) { return v.local.data(); }
  static Index local_size(const Vector& v) { return static_cast<Index>(v.local.size()); }
  static Index global_size(const Vector& v) { return DistributedBackend::size(v); }
  static Vector like(const Vector& v, Index n) {
    return {Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n)), v.layout};
  }
  // A split vector's communicator (a replicated one has none).
  static bool communicator(const Vector& v, MPI_Comm& comm) {
    if (!v.layout) return false;
    comm = v.layout->communicator().handle();
    return true;
  }

  // Element-wise: this rank's values, in contiguous ranges on its threads (the bits do not depend
  // on how the indices are shared out, nor on which rank holds them), the kernel copied into the
  // loop, as the Eigen N_Vector's (eigen_nvector.cpp).
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
  // Σ term(i): for a split vector one partial per global row (four lanes inside a row, as
  // DistributedBackend's own dot and norms), folded in global row order on every rank
  // (RowLayout::fold_rows), so 1, 2 or 4 ranks give the same bits; a replicated vector sums its
  // values like the Eigen backend.
  template <class T>
  static double sum(const Vector& shape, Index n, const T& term) {
    const RowLayout* l = shape.layout;
    if (!l) return detail::ordered_element_sum(n, term);
    const Index length = l->row_length();
    const Sums<1> total = l->fold_rows<1>([&](Index b) {
      Sums<1> s;
      s.v[0] = detail::lane_sum(b * length, (b + 1) * length, term);
      return s;
    });
    return total.v[0];
  }
  // Extremes are exact in any order: this rank's, then every rank's gathered (a NaN anywhere wins
  // everywhere).
  template <class M>
  static double minimum(const Vector& shape, Index n, const M& value, double start) {
    return extreme(shape, n, value, start, nvector_kernels::NanMin{});
  }
  template <class M>
  static double maximum(const Vector& shape, Index n, const M& value, double start) {
    return extreme(shape, n, value, start, nvector_kernels::NanMax{});
  }

 private:
  template <class M, class Pick>
  static double extreme(const Vector& shape, Index n, const M& value, double start, Pick pick) {
    double mine = start;
    for (Index i = 0; i < n && mine == mine; ++i) mine = pick(mine, value(i));
    const RowLayout* l = shape.layout;
    if (!l) return mine;
    const Communicator& comm = l->communicator();
    thread_local std::vector<double> all;
    thread_local std::vector<int> counts;
    all.resize(static_cast<std::size_t>(comm.size()));
    counts.assign(static_cast<std::size_t>(comm.size()), 1);
    comm.all_gather(std::span<const double>(&mine, 1), counts, all);
    double m = all[0];
    for (std::size_t r = 0; r < all.size() && m == m; ++r) m = pick(m, all[r]);
    return m;
  }
};

namespace {
using DistributedNVector = BackendNVector<DistributedBackend>;
}  // namespace

N_Vector make_distributed_nvector_view(DistributedVector& v, SUNContext context) {
  return DistributedNVector::view(v, context);
}

N_Vector make_distributed_nvector(const DistributedVector& like, SUNContext context) {
  return DistributedNVector::make(like, static_cast<Index>(like.local.size()), context);
}

DistributedVector* distributed_vector(N_Vector v) {
  return DistributedNVector::vector(v);
}

bool is_distributed_nvector(N_Vector v) {
  return DistributedNVector::owns(v);
}

}  // namespace rwd::sundials
