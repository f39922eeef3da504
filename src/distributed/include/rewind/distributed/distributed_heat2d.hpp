// rewind/distributed/distributed_heat2d.hpp — the 2D heat equation (rewind/problems/heat2d.hpp)
// with its grid rows split across MPI ranks.
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::DistributedHeat2D heat(1024, rwd::Communicator::world());   // 2^20 unknowns in all
//   auto y = heat.default_initial_state();    // this rank's rows of u
//   auto theta = heat.default_parameters();   // (κ, s₀), replicated
//   rwd::ExplicitRungeKutta stepper(heat, rwd::ButcherTableau::euler(), control);   // unchanged
//
// Each rank owns rows [first_row, first_row + local_rows) of u (rwd::RowLayout with one field);
// the layout is put in use on DistributedBackend by the constructor. Before each right-hand side
// the ranks exchange the rows just above and below their own with their neighbours
// (rwd::RowHalo, walls: the first rank's row above and the last rank's row below are the cold
// wall, a row of zeros — the serial problem's zero row), and then run the serial problem's row
// arithmetic (detail::heat2d_rhs_row, detail::heat2d_vjp_row) on their rows, with the halo rows
// standing in for the missing neighbours. So every value of f and (∂f/∂u)ᵀ a is the serial
// problem's to the bit.
//
// The parameter gradient (∂f/∂θ)ᵀ a = (Σ u ∇²a, Σ a g) is one partial per grid row (the serial
// row kernel's, computed by the same function), folded in global row order by
// RowLayout::fold_rows. Heat2D<EigenBackend> sums exactly this decomposition (sum_index gives one
// partial per row, in row order, for every n it allows), so the guarantee is the stronger one:
// the gradient with any number of ranks and threads is the one-process Heat2D<EigenBackend>
// gradient, bit for bit (tests/distributed/distributed_heat2d_test.cpp).
//
// More ranks than grid rows is refused by the constructor (every rank must own a row).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_halo.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/heat2d.hpp"

namespace rwd {

class DistributedHeat2D {
 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr const char* name = "heat2d";

  // n: grid points per side (as Heat2D: 3 ≤ n ≤ 46340); more ranks than rows is refused.
  DistributedHeat2D(Index n, Communicator comm)
      : serial_(n),
        layout_(std::make_shared<RowLayout>(comm, 1, n, n)),
        halo_(layout_, RowBoundary::wall, 2) {
    DistributedBackend::use_layout(layout_);
  }

  Index grid_size() const { return serial_.grid_size(); }
  Index state_size() const { return serial_.state_size(); }
  Index parameter_size() const { return 2; }
  const RowLayout& layout() const { return *layout_; }

  // θ = (κ, s₀); defaults (0.2, 0.001), as Heat2D.
  static Vector default_parameters(double diffusivity = Heat2D<>::kDefaultDiffusivity,
                                   double source = Heat2D<>::kDefaultSource) {
    Vector theta = DistributedBackend::zeros(2);
    theta.local << diffusivity, source;
    return theta;
  }
  static std::vector<std::string> parameter_names() { return Heat2D<>::parameter_names(); }

  // The serial problem's stability limits (they depend on n and κ only).
  double max_stable_dt_euler(double diffusivity = Heat2D<>::kDefaultDiffusivity) const {
    return serial_.max_stable_dt_euler(diffusivity);
  }
  double max_stable_dt_rk4(double diffusivity = Heat2D<>::kDefaultDiffusivity) const {
    return serial_.max_stable_dt_rk4(diffusivity);
  }

  // This rank's rows of Heat2D::default_initial_state(seed, noise).
  Vector default_initial_state(std::uint64_t seed = 0, double noise = 0.05) const {
    Vector y = DistributedBackend::zeros(state_size());
    const Index n = grid_size(), local_cells = layout_->local_rows() * n;
    const Index first_cell = layout_->first_row() * n;
    const detail::Heat2DBump bump = detail::Heat2DBump::for_grid(n);
    double* u = y.local.data();
    for (Index c = 0; c < local_cells; ++c)
      u[c] =
          detail::heat2d_initial_cell(bump, seed, noise, static_cast<std::uint32_t>(first_cell + c),
                                      static_cast<std::uint32_t>(n));
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    require_sizes(y, theta, f, "rhs");
    halo_.exchange(y.local.data(), kState);
    const auto p = detail::Heat2DParameters::load(theta.local.data());
    const Index n = grid_size(), first = layout_->first_row();
    const double* u = y.local.data();
    double* out = f.local.data();
    layout_->for_each_local_row([&](Index r) {
      const Rows ur = rows(u, r, kState);
      detail::heat2d_rhs_row(p, n, ur.row, ur.up, ur.down, *profile(first + r), profile(0),
                             out + r * n);
    });
  }

  // out_y = (∂f/∂u)ᵀ a = κ∇²a (this rank's rows), out_theta = (Σ u ∇²a, Σ a g) (replicated).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& a, Vector& out_y,
           Vector& out_theta) const {
    require_sizes(y, theta, out_y, "vjp");
    require_sizes(a, theta, out_y, "vjp");
    if (out_theta.layout || out_theta.local.size() != 2)
      detail::fail<InvalidArgument>("heat2d vjp: out_theta must be a replicated vector of 2");
    // Only a's neighbours enter (the Laplacian lands on a; u is read on its own row).
    halo_.exchange(a.local.data(), kCotangent);
    const auto p = detail::Heat2DParameters::load(theta.local.data());
    const Index n = grid_size(), first = layout_->first_row();
    const double* u = y.local.data();
    const double* av = a.local.data();
    double* out = out_y.local.data();
    // One pass per row writes the row of out_y and returns the row's parameter partial; the
    // partials are folded in global row order (fold_rows calls each local row exactly once).
    const Sums<2> s = layout_->fold_rows<2>([&](Index r) {
      const Rows ar = rows(av, r, kCotangent);
      return detail::heat2d_vjp_row(p, n, u + r * n, ar.row, ar.up, ar.down, *profile(first + r),
                                    profile(0), out + r * n);
    });
    out_theta.local[0] = s.v[0];
    out_theta.local[1] = s.v[1];
  }

 private:
  // A local row and its neighbours above and below, halo rows (or the wall) at this rank's edges.
  struct Rows {
    const double *row, *up, *down;
  };
  // The halo sets: y's rows (the rhs) and the cotangent's (the vjp).
  static constexpr int kState = 0, kCotangent = 1;
  Rows rows(const double* base, Index r, int set) const {
    const Index n = grid_size(), last = layout_->local_rows() - 1;
    const double* row = base + r * n;
    const double* up = r == 0 ? halo_.above(set, 0) : row - n;
    const double* down = r == last ? halo_.below(set, 0) : row + n;
    return {row, up, down};
  }
  // The heater profile p from global row (or column) i on: p_i, p_{i+1}, ….
  const double* profile(Index i) const { return serial_.source_profile().data() + i; }

  void require_sizes(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments("heat2d", what, layout_.get(), y, theta, out, 2);
  }

  Heat2D<> serial_;  // sizes, checks and the heater profile of the serial problem
  std::shared_ptr<RowLayout> layout_;
  RowHalo halo_;  // rows above and below (the wall at the grid's edges): of y; of the cotangent
};

}  // namespace rwd
