// rewind/distributed/distributed_backend.hpp — a vector backend whose state vectors are split
// across MPI ranks (each rank its rows, rewind/distributed/row_layout.hpp) and whose reductions
// give the same bits for any number of ranks.
//
//   auto layout = std::make_shared<rwd::RowLayout>(world, 2, n, n);
//   rwd::DistributedBackend::use_layout(layout);     // vectors of 2n² values are now split
//   auto y = rwd::DistributedBackend::zeros(2 * n * n);   // this rank's rows only
//   auto theta = rwd::DistributedBackend::zeros(4);       // replicated: every rank all of it
//
// Two kinds of vector share the type. A vector whose length is the global size of the layout in
// use is *distributed*: it holds this rank's rows, size(x) is the global length, data(x) points
// to the local rows, and every reduction over it is a collective (each rank calls it, in the
// same order — the drivers do, since the schedule is computed identically on every rank). Any
// other vector (parameters θ, their gradient, empty work vectors) is *replicated*: every rank
// holds all of it and reductions stay local. The drivers, integrators and stores are the serial
// ones, unchanged: they only combine vectors through the backend.
//
// for_each_index(n, f) and sum_index(n, f) with n the global size call f with this rank's local
// indices [0, host_size): kernels index the local data they were given. host_size(x) is the
// number of values this rank holds (copy_to_host / copy_from_host move those).
//
// Reductions over distributed vectors fold one partial per global row in row order
// (RowLayout::fold_rows); inside a row, four interleaved partial sums as on the Eigen backend.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/distributed/mpi_snapshot_ranks.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct DistributedVector {
  Eigen::VectorXd local;              // this rank's values (all of them when replicated)
  const RowLayout* layout = nullptr;  // null: replicated
};

struct DistributedBackend {
  using Vector = DistributedVector;
  static constexpr const char* name = "distributed";
  static constexpr bool deterministic = true;

  // From now on vectors of layout->global_size() values are split by `layout` (kept alive
  // here). Layouts of different global sizes coexist; a new layout of a size already in use
  // replaces the old one for vectors made from then on (vectors made before keep theirs, which
  // stays alive while the problem that made it does).
  static void use_layout(std::shared_ptr<const RowLayout> layout) {
    if (!layout) detail::fail<InvalidArgument>("DistributedBackend::use_layout: no layout");
    for (auto& l : layouts())
      if (l->global_size() == layout->global_size()) {
        l = std::move(layout);
        return;
      }
    layouts().push_back(std::move(layout));
  }
  static const RowLayout* layout_for(Index n) {
    for (const auto& l : layouts())
      if (l->global_size() == n) return l.get();
    return nullptr;
  }

  static Vector zeros(Index n) {
    if (n < 0) detail::fail<InvalidArgument>("zeros: size ", n, " must be >= 0");
    Vector x;
    x.layout = layout_for(n);
    x.local = Eigen::VectorXd::Zero(x.layout ? x.layout->local_size() : n);
    return x;
  }
  static Index size(const Vector& x) {
    return x.layout ? x.layout->global_size() : static_cast<Index>(x.local.size());
  }
  static Index host_size(const Vector& x) { return static_cast<Index>(x.local.size()); }
  // The index in the whole vector of this rank's value number `local` (itself when replicated).
  static Index global_index(const Vector& x, Index local) {
    return x.layout ? x.layout->global_index(local) : local;
  }
  static double* data(Vector& x) { return x.local.data(); }
  static const double* data(const Vector& x) { return x.local.data(); }

  static void fill(Vector& x, double a) { EigenBackend::fill(x.local, a); }
  static void copy(const Vector& src, Vector& dst) {
    dst.layout = src.layout;
    EigenBackend::copy(src.local, dst.local);
  }
  static void copy_streaming(const Vector& src, Vector& dst) {
    dst.layout = src.layout;
    EigenBackend::copy_streaming(src.local, dst.local);
  }
  static void scale(double a, Vector& x) { EigenBackend::scale(a, x.local); }
  static void axpy(double a, const Vector& x, Vector& y) {
    same_kind(x, y, "axpy");
    EigenBackend::axpy(a, x.local, y.local);
  }
  static void linear_combination(Vector& out, double a, const Vector& x, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    std::array<const Eigen::VectorXd*, kMaxCombinationTerms> locals = local_vectors(v);
    EigenBackend::linear_combination(
        out.local, a, x.local, c, std::span<const Eigen::VectorXd* const>(locals.data(), v.size()));
  }
  static void linear_combination(Vector& out, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    std::array<const Eigen::VectorXd*, kMaxCombinationTerms> locals = local_vectors(v);
    EigenBackend::linear_combination(
        out.local, c, std::span<const Eigen::VectorXd* const>(locals.data(), v.size()));
  }

  static double dot(const Vector& x, const Vector& y) {
    same_kind(x, y, "dot");
    if (!x.layout) return EigenBackend::dot(x.local, y.local);
    const double *a = x.local.data(), *b = y.local.data();
    return element_sum(*x.layout, [a, b](Index i) { return a[i] * b[i]; });
  }
  static double max_norm(const Vector& x) {
    const double local = EigenBackend::max_norm(x.local);
    return x.layout ? max_over(x.layout->communicator(), local) : local;
  }
  static double wrms_norm(const Vector& x, const Vector& w) {
    same_kind(x, w, "wrms_norm");
    if (!x.layout) return EigenBackend::wrms_norm(x.local, w.local);
    const double *a = x.local.data(), *b = w.local.data();
    const double sum = element_sum(*x.layout, [a, b](Index i) {
      const double r = a[i] * b[i];
      return r * r;
    });
    return std::sqrt(sum / static_cast<double>(x.layout->global_size()));
  }
  static double error_norm(const Vector& e, const Vector& y0, const Vector& y1, double rtol,
                           double atol) {
    same_kind(e, y0, "error_norm");
    same_kind(e, y1, "error_norm");
    if (!e.layout) return EigenBackend::error_norm(e.local, y0.local, y1.local, rtol, atol);
    const double *es = e.local.data(), *a = y0.local.data(), *b = y1.local.data();
    const double sum = element_sum(*e.layout, [=](Index i) {
      const double scale = atol + rtol * std::max(std::abs(a[i]), std::abs(b[i]));
      const double r = es[i] / scale;
      return r * r;
    });
    return std::sqrt(sum / static_cast<double>(e.layout->global_size()));
  }
  static bool all_finite(const Vector& x) {
    const bool local = EigenBackend::all_finite(x.local);
    return x.layout ? !x.layout->communicator().any(!local) : local;
  }

  static void copy_to_host(const Vector& x, std::span<double> host) {
    EigenBackend::copy_to_host(x.local, host);
  }
  static void copy_from_host(std::span<const double> host, Vector& x) {
    EigenBackend::copy_from_host(host, x.local);
  }

  // Where this rank's values of x sit in the whole state, and the ranks, for the snapshot store
  // (rwd::process_slice): a distributed vector's rows of each field, every `rows` rows apart; a
  // replicated one is whole and needs no ranks (every rank writes all of it).
  static ProcessSlice process_slice(const Vector& x) {
    if (!x.layout) return {StateSlice::whole_state(static_cast<Index>(x.local.size())), nullptr};
    const RowLayout& l = *x.layout;
    const StateSlice slice{l.global_size(), l.first_row() * l.row_length(),
                           l.local_rows() * l.row_length(), l.fields(), l.rows() * l.row_length()};
    return {slice, std::make_shared<MpiSnapshotRanks>(l.communicator())};
  }

  // Whether `mine` is true on any rank (a collective when a layout is in use; the drift monitor's
  // verdict is global through it).
  static bool any_rank(bool mine) {
    return layouts().empty() ? mine : layouts().back()->communicator().any(mine);
  }
  // The largest `mine` over the ranks (NaN wins; a collective when a layout is in use).
  static double max_over_ranks(double mine) {
    return layouts().empty() ? mine : max_over(layouts().back()->communicator(), mine);
  }
  // The ranks sharing the state (1 before any layout is in use).
  static int ranks() { return layouts().empty() ? 1 : layouts().back()->communicator().size(); }

  template <class F>
  static void for_each_index(Index n, F&& f) {
    const RowLayout* l = layout_for(n);
    EigenBackend::for_each_index(l ? l->local_size() : n, f);
  }
  template <int K, class F>
  static Sums<K> sum_index(Index n, F&& f) {
    const RowLayout* l = layout_for(n);
    if (!l) return EigenBackend::sum_index<K>(n, f);
    const Index length = l->row_length();
    return l->fold_rows<K>([&](Index b) {
      Sums<K> s = Sums<K>::zero();
      for (Index i = b * length; i < (b + 1) * length; ++i) s = s + f(i);
      return s;
    });
  }

  // sum_index(n, f) where the caller can sum a stretch of local indices faster than f one index at
  // a time: sum_range(begin, end) must return what adding f(begin), …, f(end − 1) one after the
  // other from zero returns (a vectorised loop may, as rwd::DriftMonitor's fingerprint does). The
  // stretches are sum_index's pieces — a split vector's rows, a replicated one's blocks as
  // EigenBackend::sum_index takes them — so the result is sum_index's bits.
  template <int K, class SumRange>
  static Sums<K> sum_index_ranges(Index n, SumRange&& sum_range) {
    const RowLayout* l = layout_for(n);
    if (!l) return EigenBackend::sum_index_ranges<K>(n, sum_range);
    const Index length = l->row_length();
    return l->fold_rows<K>([&](Index b) { return sum_range(b * length, (b + 1) * length); });
  }

 private:
  static std::vector<std::shared_ptr<const RowLayout>>& layouts() {
    static std::vector<std::shared_ptr<const RowLayout>> in_use;
    return in_use;
  }

  // max is exact in any order; NaN on any rank must win on every rank.
  static double max_over(const Communicator& comm, double mine) {
    thread_local std::vector<double> all;
    thread_local std::vector<int> counts;
    all.resize(static_cast<std::size_t>(comm.size()));
    counts.assign(static_cast<std::size_t>(comm.size()), 1);
    comm.all_gather(std::span<const double>(&mine, 1), counts, all);
    double m = all.empty() ? mine : all[0];
    for (double a : all) m = (a > m || a != a) ? a : m;
    return m;
  }

  static void same_kind(const Vector& x, const Vector& y, const char* what) {
    if (x.layout != y.layout || x.local.size() != y.local.size())
      detail::fail<InvalidArgument>(what, ": vectors of ", size(x), " and ", size(y), " values (",
                                    x.layout ? "distributed" : "replicated", ", ",
                                    y.layout ? "distributed" : "replicated",
                                    ") cannot be combined");
  }

  static std::array<const Eigen::VectorXd*, kMaxCombinationTerms> local_vectors(
      std::span<const Vector* const> v) {
    if (v.size() > static_cast<std::size_t>(kMaxCombinationTerms))
      detail::fail<InvalidArgument>("linear_combination: ", v.size(), " terms; at most ",
                                    kMaxCombinationTerms);
    std::array<const Eigen::VectorXd*, kMaxCombinationTerms> locals{};
    for (std::size_t j = 0; j < v.size(); ++j) locals[j] = &v[j]->local;
    return locals;
  }

  // Σ_i term(i) over this rank's local indices, one partial per row (four interleaved lanes
  // inside it), folded in global row order on every rank.
  template <class Term>
  static double element_sum(const RowLayout& l, Term&& term) {
    const Index length = l.row_length();
    const Sums<1> s = l.fold_rows<1>([&](Index b) {
      Sums<1> r;
      r.v[0] = detail::lane_sum(b * length, (b + 1) * length, term);
      return r;
    });
    return s.v[0];
  }
};

static_assert(VectorBackend<DistributedBackend>);

namespace detail {
// What a distributed problem's rhs/vjp refuse: a state vector `y` or `out` not split by the
// problem's `layout`, or a θ that is not a replicated vector of `parameters` values.
inline void require_split_arguments(const char* problem, const char* what, const RowLayout* layout,
                                    const DistributedVector& y, const DistributedVector& theta,
                                    const DistributedVector& out, Index parameters) {
  if (y.layout != layout || out.layout != layout)
    fail<InvalidArgument>(problem, " ", what,
                          ": state vectors must be split by this problem's layout");
  if (theta.layout || theta.local.size() != parameters)
    fail<InvalidArgument>(problem, " ", what, ": theta must be a replicated vector of ", parameters,
                          parameters == 1 ? " parameter" : " parameters");
}
}  // namespace detail

}  // namespace rwd
