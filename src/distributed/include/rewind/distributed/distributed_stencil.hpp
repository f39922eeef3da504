// rewind/distributed/distributed_stencil.hpp — a stencil model (rewind/stencil_model.hpp) on a
// 2-D or 3-D grid split across MPI ranks, its vector–Jacobian products derived as on one process.
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::DistributedStencilProblem<GrayScottModel> problem(GrayScottModel{}, {708, 708},
//                                                          rwd::Communicator::world());
//   auto y0 = problem.state_from([](int field, const rwd::GridCell<2>& at) { … });  // my slabs
//   auto theta = problem.default_parameters();                                     // replicated
//   rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(), control);  // unchanged
//
// The grid's slabs (the cells of one index along dimension 0: rows of a 2-D grid, planes of a
// 3-D one) are split across ranks in order, as evenly as possible (rwd::RowLayout with the
// model's fields, rows = n_0, row length = the cells of a slab; put in use on
// DistributedBackend by the constructor). A rank's vectors hold its slabs, field by field — the
// serial layout's rows of each field.
//
// Halo exchange. The stencil reaches `span` = (highest − lowest offset along dimension 0) slabs:
// the vjp at a rank's slabs gathers contributions from cells up to that far outside them, and
// those cells read as far again. So before each rhs, jvp and vjp every rank copies its slabs into
// a window [span slabs above | its own | span slabs below] and fills the halos with the
// neighbouring ranks' nearest slabs (two MPI_Sendrecv per vector: first slabs up, last slabs
// down; a periodic dimension 0 wraps around, a fixed or reflecting one has no rank beyond its
// ends). Every rank must own at least `span` slabs, so the halos come from the next rank alone;
// the constructor refuses more ranks than that allows and names the largest count that works.
//
// The same bits for any number of ranks — the one-process rwd::StencilProblem's bits. The rhs and
// jvp of a cell are computed from the same neighbourhood by the same code. The vjp visits, in
// the one-process order (colour of the whole grid's block, then slab), every slab that touches
// this rank's slabs — its own, and the halo slabs within reach, recomputed here — so each of its
// entries receives the same contributions in the same order; contributions that land outside its
// slabs are dropped. The parameter part is one partial per slab, each slab's computed by the
// rank that owns it and folded in slab order on every rank (RowLayout::fold_rows): the
// one-process sum. Checked with 1–4 ranks and 1–2 threads per rank against StencilProblem
// (tests/distributed/distributed_stencil_test.cpp).
//
// Cost: the window holds three copies of a rank's slabs plus halos (y, the cotangent or
// direction, and the output), and the vjp recomputes up to 2·span halo slabs per rank. A 1-D
// grid does not split (a 1-D stencil's cells are the slabs; their parameter sums are taken per
// block of cells on one process): the constructor's static_assert says so.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/stencil_model.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <class Model>
class DistributedStencilProblem {
  using Engine = detail::StencilEngine<Model>;

 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr int kDimension = Engine::kDimension;
  static constexpr int kFields = Engine::kFields;
  static constexpr int kParameters = Engine::kParameters;
  static_assert(kDimension >= 2,
                "rwd::DistributedStencilProblem: a 1-D grid does not split across ranks (its "
                "slabs are single cells); run it with rwd::stencil_problem on one process");

  // sizes: the grid's, one per dimension (as rwd::stencil_problem); comm: the ranks to split
  // dimension 0 over. Refuses (InvalidArgument) what rwd::stencil_problem refuses, and a rank
  // that would own fewer slabs than the stencil reaches along dimension 0.
  DistributedStencilProblem(Model model, const std::array<Index, kDimension>& sizes,
                            Communicator comm, StencilOptions options = {})
      : engine_(std::move(model), sizes, options),
        span_(Engine::highest_offset(0) - Engine::lowest_offset(0)),
        layout_(std::make_shared<RowLayout>(checked_comm(comm, sizes[0]), kFields, sizes[0],
                                            engine_.grid().slab_cells())),
        slab_rows_(comm, 1, sizes[0], engine_.grid().slab_cells()) {
    place_window();
    const std::size_t window = static_cast<std::size_t>(kFields * engine_.grid().stored_cells());
    state_.assign(window, 0.0);
    cotangent_.assign(window, 0.0);
    output_.assign(window, 0.0);
    partials_.assign(static_cast<std::size_t>(local_slabs() * Engine::kSumWidth), 0.0);
    DistributedBackend::use_layout(layout_);
  }

  Index state_size() const { return kFields * engine_.grid().cells(); }
  Index parameter_size() const { return kParameters; }
  const std::array<Index, kDimension>& grid_sizes() const { return engine_.grid().sizes(); }
  const RowLayout& layout() const { return *layout_; }
  const Model& model() const { return engine_.model(); }
  // This rank's slabs: [first_slab(), first_slab() + local_slabs()) along dimension 0.
  Index first_slab() const { return layout_->first_row(); }
  Index local_slabs() const { return layout_->local_rows(); }
  // Slabs copied from each neighbour before a product: the stencil's reach along dimension 0.
  Index halo_slabs() const { return span_; }

  static std::vector<std::string> field_names() { return StencilProblem<Model>::field_names(); }
  static std::vector<std::string> parameter_names() {
    return StencilProblem<Model>::parameter_names();
  }
  // The model's default_parameters, replicated on every rank.
  static Vector default_parameters() {
    const auto serial = StencilProblem<Model>::default_parameters();
    Vector theta = DistributedBackend::zeros(kParameters);
    for (int j = 0; j < kParameters; ++j) theta.local[j] = serial[j];
    return theta;
  }

  // This rank's part of the state whose value at (field, cell) is value(field, at) — the same on
  // every rank for a cell, so the state does not depend on the rank count.
  template <class Value>
  Vector state_from(Value&& value) const {
    Vector y = DistributedBackend::zeros(state_size());
    const Index slab = engine_.grid().slab_cells(), local = local_slabs() * slab;
    for (int k = 0; k < kFields; ++k)
      for (Index c = 0; c < local; ++c)
        y.local[k * local + c] = value(k, cell_at(first_slab() * slab + c));
    return y;
  }
  // This rank's part of a whole-grid state in the serial layout (state_size() values).
  Vector local_part(std::span<const double> whole) const {
    detail::require_length(kName, "whole-grid state", static_cast<Index>(whole.size()),
                           state_size());
    Vector y = DistributedBackend::zeros(state_size());
    const Index slab = engine_.grid().slab_cells(), local = local_slabs() * slab;
    for (int k = 0; k < kFields; ++k)
      std::copy_n(whole.data() + k * engine_.grid().cells() + first_slab() * slab, local,
                  y.local.data() + k * local);
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    require_split(y, theta, f, "rhs");
    fill_window(y, state_);
    engine_.rhs(state_.data(), theta.local.data(), output_.data(), first_slab(),
                first_slab() + local_slabs());
    take_own_slabs(output_, f);
  }

  // out = (∂f/∂y) w.
  void jvp(double /*t*/, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    require_split(y, theta, out, "jvp");
    require_split(w, theta, out, "jvp");
    fill_window(y, state_);
    fill_window(w, cotangent_);
    engine_.jvp(state_.data(), theta.local.data(), cotangent_.data(), output_.data(), first_slab(),
                first_slab() + local_slabs());
    take_own_slabs(output_, out);
  }

  // out_y = (∂f/∂y)ᵀ v (this rank's slabs), out_theta = (∂f/∂θ)ᵀ v (replicated).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    require_split(y, theta, out_y, "vjp");
    require_split(v, theta, out_y, "vjp");
    if (out_theta.layout || out_theta.local.size() != kParameters)
      detail::fail<InvalidArgument>(kName, " vjp: out_theta must be a replicated vector of ",
                                    kParameters);
    fill_window(y, state_);
    fill_window(v, cotangent_);
    engine_.vjp(state_.data(), theta.local.data(), cotangent_.data(), output_.data(),
                partials_.data(), slots_.data());
    take_own_slabs(output_, out_y);
    if constexpr (kParameters > 0) {
      const Sums<kParameters> total = slab_rows_.fold_rows<kParameters>([&](Index r) {
        Sums<kParameters> s;
        for (int j = 0; j < kParameters; ++j) s.v[j] = partials_[r * Engine::kSumWidth + j];
        return s;
      });
      for (int j = 0; j < kParameters; ++j) out_theta.local[j] = total.v[j];
    }
  }

 private:
  static constexpr const char* kName = "rwd::DistributedStencilProblem";

  // The communicator, once every rank is known to own at least span_ slabs.
  Communicator checked_comm(Communicator comm, Index slabs) const {
    const Index ranks = comm.size();
    const Index fewest = slabs / ranks;  // RowLayout's split: ⌊n/R⌋ or ⌈n/R⌉ slabs per rank
    if (fewest < std::max<Index>(1, span_))
      detail::fail<InvalidArgument>(
          kName, ": ", ranks, " ranks over n_0 = ", slabs, " slabs leave a rank ", fewest,
          " slabs, and the stencil reaches ", span_,
          " slabs along dimension 0 (every rank needs at least that many, and one): use at most ",
          slabs / std::max<Index>(1, span_), " ranks");
    return comm;
  }

  // Global cell index → the cell (index per dimension, sizes).
  GridCell<kDimension> cell_at(Index c) const {
    GridCell<kDimension> at{{}, grid_sizes()};
    for (int d = kDimension - 1; d >= 0; --d) {
      at.index[d] = c % grid_sizes()[d];
      c /= grid_sizes()[d];
    }
    return at;
  }

  // The window [span_ above | own slabs | span_ below], each global slab's stored position in it
  // (own slabs first, so a slab both owned and a halo copy — one rank around a periodic
  // dimension — is read from the owned copy), and which slabs the vjp visits.
  void place_window() {
    const Index n = grid_sizes()[0], first = first_slab(), own = local_slabs();
    const bool periodic = Model::boundaries[0] == Boundary::periodic;
    std::vector<Index> storage(static_cast<std::size_t>(n), -1);
    for (Index i = 0; i < own; ++i) storage[static_cast<std::size_t>(first + i)] = span_ + i;
    auto place = [&](Index global, Index position) {
      if (periodic) global = ((global % n) + n) % n;
      if (global < 0 || global >= n) return;  // beyond a wall: never read
      Index& at = storage[static_cast<std::size_t>(global)];
      if (at < 0) at = position;
    };
    for (Index p = 0; p < span_; ++p) {
      place(first - span_ + p, p);
      place(first + own + p, span_ + own + p);
    }
    auto owned = [&](Index g) { return g >= first && g < first + own; };
    auto neighbour = [&](Index g, int s) {
      return detail::map_stencil_index(g + Model::stencil[s][0], n, Model::boundaries[0]);
    };
    slots_.assign(static_cast<std::size_t>(n), detail::kSlabSkipped);
    for (Index g = 0; g < n; ++g) {
      bool touches = false, held = storage[static_cast<std::size_t>(g)] >= 0;
      for (int s = 0; s < Engine::kPoints; ++s) {
        const Index m = neighbour(g, s);
        if (m == detail::kStencilWall) continue;
        touches = touches || owned(m);
        held = held && storage[static_cast<std::size_t>(m)] >= 0;
      }
      if (!touches) continue;
      if (!held)
        detail::fail<Error>(kName, ": slab ", g,
                            " touches this rank's slabs but its neighbourhood "
                            "is not in the window (an internal error)");
      slots_[static_cast<std::size_t>(g)] = owned(g) ? g - first : detail::kSlabUnsummed;
    }
    engine_.grid().store_slabs(std::move(storage), span_ + own + span_);
  }

  // window ← x's own slabs, then the halos from the neighbouring ranks (a collective).
  void fill_window(const Vector& x, std::vector<double>& window) const {
    const Index slab = engine_.grid().slab_cells(), own = local_slabs() * slab;
    const Index stored = engine_.grid().stored_cells(), halo = span_ * slab;
    for (int k = 0; k < kFields; ++k)
      std::copy_n(x.local.data() + k * own, own, window.data() + k * stored + halo);
    if (span_ > 0) exchange_halos(window);
  }

  void exchange_halos(std::vector<double>& window) const {
    const Communicator& comm = layout_->communicator();
    const Index slab = engine_.grid().slab_cells(), own = local_slabs() * slab;
    const Index stored = engine_.grid().stored_cells(), halo = span_ * slab;
    const bool periodic = Model::boundaries[0] == Boundary::periodic;
    const int rank = comm.rank(), ranks = comm.size();
    const int up = rank > 0 ? rank - 1 : (periodic ? ranks - 1 : MPI_PROC_NULL);
    const int down = rank + 1 < ranks ? rank + 1 : (periodic ? 0 : MPI_PROC_NULL);
    const std::size_t count = static_cast<std::size_t>(kFields * halo);
    send_.resize(count);
    receive_.resize(count);
    // Field k's `halo` values from window offset `from` into the message, and back at `to`.
    auto pack = [&](Index from) {
      for (int k = 0; k < kFields; ++k)
        std::copy_n(window.data() + k * stored + from, halo, send_.data() + k * halo);
    };
    auto unpack = [&](Index to) {
      for (int k = 0; k < kFields; ++k)
        std::copy_n(receive_.data() + k * halo, halo, window.data() + k * stored + to);
    };
    // My first slabs go up; the rank below's first slabs arrive below my own.
    pack(halo);
    comm.exchange(up, send_, down, receive_, 3);
    if (down != MPI_PROC_NULL) unpack(halo + own);
    // My last slabs go down; the rank above's last slabs arrive above my own.
    pack(own);
    comm.exchange(down, send_, up, receive_, 4);
    if (up != MPI_PROC_NULL) unpack(0);
  }

  // out's own slabs ← the window's.
  void take_own_slabs(const std::vector<double>& window, Vector& out) const {
    const Index slab = engine_.grid().slab_cells(), own = local_slabs() * slab;
    const Index stored = engine_.grid().stored_cells(), halo = span_ * slab;
    for (int k = 0; k < kFields; ++k)
      std::copy_n(window.data() + k * stored + halo, own, out.local.data() + k * own);
  }

  void require_split(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments(kName, what, layout_.get(), y, theta, out, kParameters);
  }

  Engine engine_;
  Index span_;
  std::shared_ptr<RowLayout> layout_;
  RowLayout slab_rows_;       // the slabs as one field: the parameter partials' fold
  std::vector<Index> slots_;  // per global slab: the vjp's visit (see StencilEngine::vjp)
  mutable std::vector<double> state_, cotangent_, output_;  // windows (field-major)
  mutable std::vector<double> partials_;                    // per own slab, kSumWidth values
  mutable std::vector<double> send_, receive_;              // one halo message
};

}  // namespace rwd
