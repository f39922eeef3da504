// rewind/distributed/distributed_lorenz96.hpp — Lorenz-96 (rewind/problems/lorenz96.hpp) with
// its ring of N variables split across MPI ranks.
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::DistributedLorenz96 l96(1000000, rwd::Communicator::world());
//   auto y = l96.default_initial_state();     // this rank's stretch of the ring
//   auto theta = l96.default_parameters();    // (F), replicated
//   rwd::ExplicitRungeKutta stepper(l96, rwd::ButcherTableau::rk4(), control);   // unchanged
//
// The ring is cut into rows of L consecutive variables (rwd::RowLayout with one field), L the
// smallest divisor of N with L ≥ max(2, ⌈N/4096⌉) (row_length_for): it depends on N only, so the
// backend's dot products and norms (one partial per row) give the same bits for every rank count;
// there are at most 4096 rows (the gathers of row partials stay small), and L ≥ 2 so one halo row
// on each side holds the two neighbours the stencil reaches (y_{i−2}, y_{i+2}). Each rank owns
// whole rows, so at most N/L ranks: a prime N is one row and runs on one rank only (refused
// with more, by the layout). Before each rhs or vjp the ranks exchange the rows next to their
// own (rwd::RowHalo, periodic: the ring), whole rows — up to 2L values each way where the
// stencil needs 2; at L = ⌈N/4096⌉ that is under 0.1% of a rank's share of a large ring.
// f and (∂f/∂y)ᵀ v are then the serial problem's arithmetic (detail::lorenz96_rhs_value,
// detail::lorenz96_vjp_value) on the same operands: the serial bits.
//
// dJ/dF = Σ_i v_i is summed in the serial problem's order exactly — blocks of
// detail::kReductionBlock (4096) consecutive indices, each in four interleaved lanes (index i of
// block b into lane (i − 4096·b) mod 4, each lane added in index order from 0, combined as
// (l0 + l1) + (l2 + l3): detail::lane_sum), then the block sums in block order from 0 —
// whatever the ranks: a block that straddles ranks is carried along, its four running lanes
// passed from one rank to the next (a chain of point-to-point messages,
// one per rank boundary that cuts a block; a rank sends before it waits whenever its range
// covers more than one block, so the chain costs a few message latencies, not N/p additions
// per rank in turn). The finished block sums are gathered on every rank and added in order. So
// the gradient with any number of ranks and threads is the one-process Lorenz96<EigenBackend>
// gradient, bit for bit (tests/distributed/distributed_lorenz96_test.cpp). (The alternative —
// one partial per row folded by RowLayout::fold_rows — would be rank-independent too, but
// equal to the serial sum only when L = 4096.)
#pragma once

#include <mpi.h>

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_halo.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace rwd {

class DistributedLorenz96 {
 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr const char* name = "lorenz96";
  static constexpr Index kMaxRows = 4096;

  // n: the number of variables (as Lorenz96: n ≥ 4); more ranks than rows is refused.
  DistributedLorenz96(Index n, Communicator comm)
      : serial_(n), layout_(make_layout(n, comm)), halo_(layout_, RowBoundary::periodic, 2) {
    DistributedBackend::use_layout(layout_);
    const Index blocks = (n + detail::kReductionBlock - 1) / detail::kReductionBlock;
    block_sums_.assign(static_cast<std::size_t>(blocks), 0.0);
    block_lanes_.assign(static_cast<std::size_t>(blocks), Lanes{});
    gathered_.assign(static_cast<std::size_t>(blocks), 0.0);
    counts_.resize(static_cast<std::size_t>(comm.size()));
    for (int k = 0; k < comm.size(); ++k)
      counts_[static_cast<std::size_t>(k)] =
          static_cast<int>(finished_blocks_before(end_of(k)) - finished_blocks_before(begin_of(k)));
  }

  // The row length L for a ring of n variables: the smallest divisor of n that is at least
  // max(2, ⌈n/kMaxRows⌉) (see the header comment).
  static Index row_length_for(Index n) {
    if (n < Lorenz96<>::kMinStateSize)
      detail::fail<InvalidArgument>("Lorenz96: state size N = ", n,
                                    " must be >= ", Lorenz96<>::kMinStateSize);
    Index d = std::max<Index>(2, (n + kMaxRows - 1) / kMaxRows);
    while (n % d != 0) ++d;
    return d;
  }

  Index state_size() const { return serial_.state_size(); }
  Index parameter_size() const { return 1; }
  const RowLayout& layout() const { return *layout_; }

  // θ = (F); default F = 8, as Lorenz96.
  static Vector default_parameters(double forcing = 8.0) {
    Vector theta = DistributedBackend::zeros(1);
    theta.local[0] = forcing;
    return theta;
  }
  static std::vector<std::string> parameter_names() { return Lorenz96<>::parameter_names(); }

  // This rank's stretch of Lorenz96::default_initial_state(forcing, perturbation).
  Vector default_initial_state(double forcing = 8.0, double perturbation = 0.01) const {
    Vector y = DistributedBackend::zeros(state_size());
    y.local.setConstant(forcing);
    if (begin_of(layout_->communicator().rank()) == 0) y.local[0] += perturbation;
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    require_sizes(y, theta, f, "rhs");
    halo_.exchange(y.local.data(), kState);
    const double forcing = theta.local[0];
    const Index m = y.local.size();
    const double* u = y.local.data();
    double* out = f.local.data();
    const Ring yr = ring(u, kState);
    // The two first values reach back into the halo above, the last one forward into the halo
    // below; the rest is a plain loop.
    for_each_edge(m, [&](Index i) {
      out[i] = detail::lorenz96_rhs_value(yr(i - 2), yr(i - 1), u[i], yr(i + 1), forcing);
    });
    for_each_interior(m, [&](Index begin, Index end) {
      detail::lorenz96_rhs_interior(u, forcing, out, begin, end);
    });
  }

  // out_y = (∂f/∂y)ᵀ v (this rank's stretch), out_theta = (Σ_i v_i) in the serial order.
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    require_sizes(y, theta, out_y, "vjp");
    require_sizes(v, theta, out_y, "vjp");
    if (out_theta.layout || out_theta.local.size() != 1)
      detail::fail<InvalidArgument>("lorenz96 vjp: out_theta must be a replicated vector of 1");
    halo_.exchange(y.local.data(), kState);
    halo_.exchange(v.local.data(), kCotangent);
    const Index m = y.local.size();
    const double *u = y.local.data(), *a = v.local.data();
    double* out = out_y.local.data();
    const Ring yr = ring(u, kState), ar = ring(a, kCotangent);
    for_each_edge(m, [&](Index j) {
      out[j] = detail::lorenz96_vjp_value(ar(j - 1), a[j], ar(j + 1), ar(j + 2), yr(j - 2),
                                          yr(j - 1), yr(j + 1), yr(j + 2));
    });
    for_each_interior(m, [&](Index begin, Index end) { vjp_interior(u, a, out, begin, end); });
    out_theta.local[0] = forcing_sum(a);
  }

 private:
  static constexpr int kState = 0, kCotangent = 1;
  static constexpr int kCarryTag = 3;

  // A rank's stretch of the ring with the halo rows on either side: (i) for local i in
  // [−L, m + L).
  struct Ring {
    const double *local, *above, *below;
    Index m, L;
    double operator()(Index i) const {
      if (i < 0) return above[L + i];
      if (i >= m) return below[i - m];
      return local[i];
    }
  };
  Ring ring(const double* local, int set) const {
    return {local, halo_.above(set, 0), halo_.below(set, 0),
            layout_->local_rows() * layout_->row_length(), layout_->row_length()};
  }

  // op(i) at the local indices whose stencil leaves the stretch (0, 1 and m − 2, m − 1; all of
  // them when m < 4); op(begin, end) over ranges of the others, the interior [2, m − 2), shared
  // out among threads (element-wise, so any ranges give the same bits).
  template <class Op>
  static void for_each_edge(Index m, Op&& op) {
    for (Index i = 0; i < std::min<Index>(2, m); ++i) op(i);
    for (Index i = std::max<Index>(2, m - 2); i < m; ++i) op(i);
  }
  template <class RangeOp>
  static void for_each_interior(Index m, RangeOp&& op) {
    detail::for_each_range(std::max<Index>(0, m - 4), [&](Index b, Index e) { op(b + 2, e + 2); });
  }
  // The vjp's state part at interior indices: the serial problem's loop, hence its bits.
  static void vjp_interior(const double* y, const double* v, double* out, Index begin, Index end) {
    detail::lorenz96_vjp_interior(y, v, out, begin, end);
  }

  static std::shared_ptr<RowLayout> make_layout(Index n, Communicator comm) {
    const Index length = row_length_for(n);
    return std::make_shared<RowLayout>(comm, 1, n / length, length);
  }

  // The global index range [begin_of(k), end_of(k)) of rank k.
  Index begin_of(int k) const { return layout_->first_row(k) * layout_->row_length(); }
  Index end_of(int k) const { return begin_of(k) + layout_->rows_of(k) * layout_->row_length(); }
  // How many blocks end at or before global index x (a block ends at min(N, (b + 1)·4096)).
  Index finished_blocks_before(Index x) const {
    const Index n = state_size(), block = detail::kReductionBlock;
    return x / block + (x == n && n % block != 0 ? 1 : 0);
  }

  // Σ_i v_i in Lorenz96<EigenBackend>'s order (see the header comment). A collective.
  double forcing_sum(const double* v) const {
    const Communicator& comm = layout_->communicator();
    const int rank = comm.rank();
    const Index n = state_size(), block = detail::kReductionBlock;
    const Index lo = begin_of(rank), hi = end_of(rank);
    const Index first = lo / block, last = (hi - 1) / block;
    const bool incoming = lo % block != 0;            // rank − 1 holds the start of `first`
    const bool outgoing = hi < n && hi % block != 0;  // rank + 1 holds the end of `last`
    // `lanes` + this rank's part of block b, each index into its lane as detail::lane_sum puts it.
    auto segment = [&](Index b, Lanes lanes) {
      const Index start = b * block;
      const Index begin = std::max(lo, start), end = std::min(hi, start + block);
      for (Index i = begin; i < end; ++i) {
        double& lane = lanes[static_cast<std::size_t>((i - start) & 3)];
        lane = lane + v[i - lo];
      }
      return lanes;
    };
    Lanes* lanes = block_lanes_.data();  // lanes[b − first] for this rank's blocks
    for (Index b = incoming ? first + 1 : first; b <= last; ++b)
      lanes[b - first] = segment(b, Lanes{});
    auto send_last = [&] {
      comm.exchange(rank + 1, std::span<const double>(lanes[last - first].data(), 4), MPI_PROC_NULL,
                    std::span<double>(), kCarryTag);
    };
    // Send first when the block going on does not wait for one coming in: the chain then costs
    // a message latency per rank boundary, not a rank's whole sum in turn.
    if (outgoing && !(incoming && first == last)) send_last();
    if (incoming) {
      Lanes carried{};
      comm.exchange(MPI_PROC_NULL, std::span<const double>(), rank - 1,
                    std::span<double>(carried.data(), 4), kCarryTag);
      lanes[0] = segment(first, carried);
      if (outgoing && first == last) send_last();
    }
    // The blocks finished here are this rank's blocks, less the last one when it goes on.
    const Index finished = (last - first + 1) - (outgoing ? 1 : 0);
    double* sums = block_sums_.data();
    for (Index b = 0; b < finished; ++b)
      sums[b] = (lanes[b][0] + lanes[b][1]) + (lanes[b][2] + lanes[b][3]);
    comm.all_gather(std::span<const double>(sums, static_cast<std::size_t>(finished)), counts_,
                    std::span<double>(gathered_));
    double total = 0.0;
    for (const double s : gathered_) total = total + s;
    return total;
  }

  void require_sizes(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments("lorenz96", what, layout_.get(), y, theta, out, 1);
  }

  Lorenz96<> serial_;  // sizes and checks of the serial problem
  std::shared_ptr<RowLayout> layout_;
  RowHalo halo_;  // the ring's rows before and after this rank's: of y; of the cotangent
  using Lanes = std::array<double, 4>;
  mutable std::vector<Lanes> block_lanes_;  // the four running lanes of this rank's blocks
  mutable std::vector<double> block_sums_, gathered_;
  std::vector<int> counts_;  // finished blocks per rank, for the gather
};

}  // namespace rwd
