// rewind/distributed/distributed_gray_scott.hpp — Gray–Scott (rewind/problems/gray_scott.hpp)
// with its grid rows split across MPI ranks.
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::DistributedGrayScott gs(708, rwd::Communicator::world());   // 10^6 unknowns in all
//   auto y = gs.default_initial_state(1);     // this rank's rows of u and v
//   auto theta = gs.default_parameters();     // replicated
//   rwd::ExplicitRungeKutta stepper(gs, rwd::ButcherTableau::rk4(), control);   // unchanged
//
// Each rank owns rows [first_row, first_row + local_rows) of u and of v (rwd::RowLayout with two
// fields); the layout is put in use on DistributedBackend by the constructor. Before each
// right-hand side the ranks exchange the rows just above and below their own (periodic: rank 0's
// upper neighbour is the last rank) — one message each way per field set — and then run the
// serial problem's row arithmetic (detail::gray_scott_rhs_row and friends) on their rows, with
// the halo rows (rwd::RowHalo, periodic) standing in for the missing neighbours. So every value is
// the serial problem's to the bit, and the parameter sums (one per row, folded in row order) are
// too: the gradient with any number of ranks is the one-process GrayScott<EigenBackend> gradient,
// bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_halo.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/gray_scott.hpp"

namespace rwd {

class DistributedGrayScott {
 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr const char* name = "gray-scott";

  // n: grid points per side (as GrayScott); more ranks than rows is refused.
  DistributedGrayScott(Index n, Communicator comm)
      : serial_(n),
        layout_(std::make_shared<RowLayout>(comm, 2, n, n)),
        grid_rows_(comm, 1, n, n),
        halo_(layout_, RowBoundary::periodic, 2) {
    DistributedBackend::use_layout(layout_);
  }

  Index grid_size() const { return serial_.grid_size(); }
  Index state_size() const { return serial_.state_size(); }
  Index parameter_size() const { return 4; }
  const RowLayout& layout() const { return *layout_; }

  static Vector default_parameters(double diffusion_u = 0.16, double diffusion_v = 0.08,
                                   double feed = 0.037, double kill = 0.06) {
    Vector theta = DistributedBackend::zeros(4);
    theta.local << diffusion_u, diffusion_v, feed, kill;
    return theta;
  }
  static std::vector<std::string> parameter_names() { return GrayScott<>::parameter_names(); }

  // This rank's rows of GrayScott::default_initial_state(seed).
  Vector default_initial_state(std::uint64_t seed = 0) const {
    Vector y = DistributedBackend::zeros(state_size());
    const Index n = grid_size(), half = std::max<Index>(1, n / 10), centre = n / 2;
    const auto lo = static_cast<std::uint32_t>(centre - half);
    const auto hi = static_cast<std::uint32_t>(std::min(n, centre + half));
    const Index local_cells = layout_->local_rows() * n, first_cell = layout_->first_row() * n;
    double* u = y.local.data();
    double* v = u + local_cells;
    for (Index c = 0; c < local_cells; ++c)
      detail::gray_scott_initial_cell(seed, static_cast<std::uint32_t>(first_cell + c),
                                      static_cast<std::uint32_t>(n), lo, hi, u[c], v[c]);
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    require_sizes(y, theta, f, "rhs");
    halo_.exchange(y.local.data(), kState);
    const auto p = detail::GrayScottParameters::load(theta.local.data());
    const Index n = grid_size(), cells = layout_->local_rows() * n;
    const double* u = y.local.data();
    double* fu = f.local.data();
    layout_->for_each_local_row([&](Index r) {
      const Rows ur = rows(u, r, 0), vr = rows(u + cells, r, 1);
      detail::gray_scott_rhs_row(p, n, ur.row, ur.up, ur.down, vr.row, vr.up, vr.down, fu + r * n,
                                 fu + cells + r * n);
    });
  }

  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& a, Vector& out_y,
           Vector& out_theta) const {
    require_sizes(y, theta, out_y, "vjp");
    require_sizes(a, theta, out_y, "vjp");
    if (out_theta.layout || out_theta.local.size() != 4)
      detail::fail<InvalidArgument>("gray-scott vjp: out_theta must be a replicated vector of 4");
    // The vjp reads the cotangent's neighbours only (the parameter sums are taken in the
    // adjoint form Σ u ∇²a, see gray_scott_parameter_terms), so only its halos travel.
    halo_.exchange(a.local.data(), kCotangent);
    const auto p = detail::GrayScottParameters::load(theta.local.data());
    const Index n = grid_size(), cells = layout_->local_rows() * n;
    const double *u = y.local.data(), *au = a.local.data();
    double* ou = out_y.local.data();
    // One pass per grid row: the row's (∂f/∂y)ᵀ a, and its partial of (∂f/∂θ)ᵀ a (covering u and
    // v of the row, like the serial problem's row sums), folded in row order.
    const Sums<4> s = grid_rows_.fold_rows<4>([&](Index r) {
      const Rows ar = rows(au, r, 2), avr = rows(au + cells, r, 3);
      return detail::gray_scott_vjp_row(p, n, u + r * n, u + cells + r * n, ar.row, ar.up, ar.down,
                                        avr.row, avr.up, avr.down, ou + r * n, ou + cells + r * n);
    });
    for (int j = 0; j < 4; ++j) out_theta.local[j] = s.v[j];
  }

 private:
  // A local row and its neighbours above and below, halo rows at this rank's edges.
  struct Rows {
    const double *row, *up, *down;
  };
  // The halo sets: y's rows (rhs) and the cotangent's (vjp).
  static constexpr int kState = 0, kCotangent = 1;
  // Row r of a field whose local rows start at `base`; `halo` picks the field's halo pair
  // (0: u, 1: v of y; 2: u, 3: v of the cotangent).
  Rows rows(const double* base, Index r, int halo) const {
    const Index n = grid_size(), last = layout_->local_rows() - 1;
    const int set = halo / 2, field = halo % 2;
    const double* row = base + r * n;
    const double* up = r == 0 ? halo_.above(set, field) : row - n;
    const double* down = r == last ? halo_.below(set, field) : row + n;
    return {row, up, down};
  }

  void require_sizes(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments("gray-scott", what, layout_.get(), y, theta, out, 4);
  }

  GrayScott<> serial_;  // sizes and checks of the serial problem
  std::shared_ptr<RowLayout> layout_;
  RowLayout grid_rows_;  // the same rows as one field: the parameter sums' decomposition
  RowHalo halo_;         // periodic rows above and below: u, v of y; u, v of the cotangent
};

}  // namespace rwd
