// rewind/distributed/distributed_brusselator.hpp — the 2D Brusselator
// (rewind/problems/brusselator2d.hpp) with its grid rows split across MPI ranks, for CVODES's BDF
// with the matrix-free GMRES solver (rewind/distributed/distributed_cvodes.hpp).
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::DistributedBrusselator problem(64, rwd::Communicator::world());
//   auto y0 = problem.default_initial_state();             // this rank's rows
//   auto theta = rwd::DistributedBrusselator::default_parameters();   // replicated (A, B, α)
//   rwd::CvodesOptions bdf;
//   bdf.linear_solver = rwd::CvodesLinearSolver::gmres;
//   rwd::CvodesIntervalStepper stepper(problem, bdf, rwd::IntervalGrid{0.0, 1.0, 10});
//
// The state keeps the serial layout — u and v interleaved per cell, grid row r is values
// [2rn, 2(r+1)n) — so one RowLayout field of n rows of 2n values splits it: rank k owns grid rows
// [first_row, first_row + local_rows). Before each rhs, jvp or vjp the ranks exchange the rows
// just above and below their own; at the walls (global rows 0 and n − 1) there is no neighbour
// and the row stands in for itself, the serial problem's mirrored ghost cell (no flux). Then each
// rank runs the serial problem's row arithmetic (detail::brusselator_*_row) on its rows, so every
// value is the serial one to the bit; θ's gradient sums one partial per grid row, folded in row
// order (RowLayout::fold_rows) — the same bits for any number of ranks and threads.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"

namespace rwd {

class DistributedBrusselator {
 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr const char* name = "brusselator";

  // n: grid points per side (as Brusselator2D, n >= 2); more ranks than rows is refused.
  DistributedBrusselator(Index n, Communicator comm)
      : serial_(n), layout_(std::make_shared<RowLayout>(comm, 1, n, 2 * n)) {
    DistributedBackend::use_layout(layout_);
    halo_.assign(static_cast<std::size_t>(4 * 2 * n), 0.0);
  }

  Index grid_size() const { return serial_.grid(); }
  Index state_size() const { return serial_.state_size(); }
  Index parameter_size() const { return 3; }
  const RowLayout& layout() const { return *layout_; }

  static Vector default_parameters(double a = 1.0, double b = 3.4, double alpha = 0.002) {
    Vector theta = DistributedBackend::zeros(3);
    theta.local << a, b, alpha;
    return theta;
  }
  static std::vector<std::string> parameter_names() { return {"A", "B", "alpha"}; }

  // This rank's rows of Brusselator2D::default_initial_state().
  Vector default_initial_state() const {
    Vector y = DistributedBackend::zeros(state_size());
    const Index n = grid_size(), first = layout_->first_row();
    for (Index r = 0; r < layout_->local_rows(); ++r)
      for (Index c = 0; c < n; ++c)
        detail::brusselator_initial_cell(n, first + r, c, y.local[2 * (r * n + c)],
                                         y.local[2 * (r * n + c) + 1]);
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    require(y, theta, "rhs", "y");
    require(f, theta, "rhs", "f");
    exchange_halos(y, 0);
    const double a = theta.local[0], b = theta.local[1], k = diffusion(theta);
    layout_->for_each_local_row([&](Index r) {
      const Rows yr = rows(y, r, 0);
      detail::brusselator_rhs_row(a, b, k, grid_size(), yr.row, yr.up, yr.down, at(f, r));
    });
  }

  // out = (∂f/∂y) v, the product the matrix-free GMRES solver needs.
  void jvp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out) const {
    require(y, theta, "jvp", "y");
    require(v, theta, "jvp", "v");
    require(out, theta, "jvp", "out");
    exchange_halos(v, 1);
    const double b = theta.local[1], k = diffusion(theta);
    layout_->for_each_local_row([&](Index r) {
      const Rows vr = rows(v, r, 1);
      detail::brusselator_jvp_row(b, k, grid_size(), at(y, r), vr.row, vr.up, vr.down, at(out, r));
    });
  }

  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& w, Vector& out_y,
           Vector& out_theta) const {
    require(y, theta, "vjp", "y");
    require(w, theta, "vjp", "w");
    require(out_y, theta, "vjp", "out_y");
    if (out_theta.layout || out_theta.local.size() != 3)
      detail::fail<InvalidArgument>("brusselator vjp: out_theta must be a replicated vector of 3");
    exchange_halos(y, 0);
    exchange_halos(w, 1);
    const double b = theta.local[1], k = diffusion(theta);
    // One partial per grid row, computed with the row's state part, folded in global row order.
    const Sums<3> s = layout_->fold_rows<3>([&](Index r) {
      const Rows yr = rows(y, r, 0), wr = rows(w, r, 1);
      return detail::brusselator_vjp_row(b, k, grid_size(), yr.row, yr.up, yr.down, wr.row, wr.up,
                                         wr.down, at(out_y, r));
    });
    out_theta.local[0] = s.v[0];
    out_theta.local[1] = s.v[1];
    out_theta.local[2] = s.v[2] * static_cast<double>(grid_size() * grid_size());
  }

 private:
  struct Rows {
    const double *row, *up, *down;
  };
  // Local row r of x and its neighbours: inside this rank's rows directly, at its edges the halo
  // pair `halo` (0: y, 1: the tangent or cotangent), at the walls the row itself.
  Rows rows(const Vector& x, Index r, int halo) const {
    const Index length = 2 * grid_size(), last = layout_->local_rows() - 1;
    const double* row = x.local.data() + r * length;
    const double* up = r > 0 ? row - length : halo_row(halo, 0);
    const double* down = r < last ? row + length : halo_row(halo, 1);
    return {row, up, down};
  }
  const double* halo_row(int halo, int side) const {
    return halo_.data() + (2 * halo + side) * 2 * grid_size();
  }
  // Local row r of a state vector (checked to be split by this layout).
  const double* at(const Vector& x, Index r) const {
    return x.local.data() + r * layout_->row_length();
  }
  double* at(Vector& x, Index r) const { return x.local.data() + r * layout_->row_length(); }

  // α / h² = α n², as the serial problem computes it.
  double diffusion(const Vector& theta) const {
    return theta.local[2] * static_cast<double>(grid_size() * grid_size());
  }

  // Fills halo pair `halo` with the rows just above and below this rank's rows: from the
  // neighbouring ranks, or — at a wall, where the serial problem mirrors — this rank's own first
  // or last row. One message each way.
  void exchange_halos(const Vector& x, int halo) const {
    const Communicator& comm = layout_->communicator();
    const Index length = 2 * grid_size(), rows = layout_->local_rows();
    const double* first = x.local.data();
    const double* last = first + (rows - 1) * length;
    double* up = halo_.data() + (2 * halo) * length;
    double* down = up + length;
    const bool top = comm.rank() == 0, bottom = comm.rank() == comm.size() - 1;
    const int above = top ? MPI_PROC_NULL : comm.rank() - 1;
    const int below = bottom ? MPI_PROC_NULL : comm.rank() + 1;
    const auto whole = [length](double* p) { return std::span<double>(p, length); };
    const auto row = [length](const double* p) { return std::span<const double>(p, length); };
    // My first row goes up; the rank below's first row arrives as my "down" halo.
    comm.exchange(above, row(first), below, whole(down), 1);
    // My last row goes down; the rank above's last row arrives as my "up" halo.
    comm.exchange(below, row(last), above, whole(up), 2);
    if (top) std::copy(first, first + length, up);
    if (bottom) std::copy(last, last + length, down);
  }

  void require(const Vector& x, const Vector& theta, const char* what, const char* which) const {
    if (x.layout != layout_.get())
      detail::fail<InvalidArgument>("brusselator ", what, ": ", which,
                                    " must be split by this problem's layout (a state vector "
                                    "made after the problem)");
    if (theta.layout || theta.local.size() != 3)
      detail::fail<InvalidArgument>("brusselator ", what,
                                    ": theta must be a replicated vector of 3 parameters");
  }

  Brusselator2D serial_;  // sizes and checks of the serial problem
  std::shared_ptr<RowLayout> layout_;
  mutable std::vector<double> halo_;  // 2 pairs (up, down) of rows: y; the tangent/cotangent
};

}  // namespace rwd
