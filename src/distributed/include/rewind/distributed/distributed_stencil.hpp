// rewind/distributed/distributed_stencil.hpp — a stencil model (rewind/stencil_model.hpp) on a
// grid split across MPI ranks, its vector–Jacobian products derived as on one process.
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
// A 1-D grid (a line of cells: Lorenz-96, a 1-D PDE) splits by blocks of cells instead. Its vjp's
// parameter part is one partial per block (of the grid's fixed cut: StencilGrid), so ranks own
// whole blocks, which need to be of one length: the smallest divisor of the grid's n cells from
// max(4096, span + 128) to four times that (a grid of up to that many cells is one block, on one
// rank). A grid whose n has no such divisor (a large prime) runs on one rank only: the
// constructor refuses more, naming n. The halos are the stencil's span plus 128 cells (a chunk of
// the vjp's vectorised loop), and the vjp recomputes, of a neighbour's block, only the chunks whose
// cells reach this rank's: about span + 128 cells on each side.
//
// Cost: the window holds three copies of a rank's slabs plus halos (y, the cotangent or
// direction, and the output), and the vjp recomputes up to 2·span halo slabs per rank.
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
#include "rewind/distributed/slab_split.hpp"
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

  // sizes: the grid's, one per dimension (as rwd::stencil_problem); comm: the ranks to split
  // dimension 0 over. Refuses (InvalidArgument) what rwd::stencil_problem refuses, and a rank
  // that would own fewer slabs than the stencil reaches along dimension 0.
  DistributedStencilProblem(Model model, const std::array<Index, kDimension>& sizes,
                            Communicator comm, StencilOptions options = {})
      : engine_(std::move(model), sizes, options), split_(kName, comm, slab_stencil(engine_)) {
    engine_.grid().store_slabs(split_.storage(), split_.stored_slabs());
    const std::size_t window = static_cast<std::size_t>(split_.window_values());
    state_.assign(window, 0.0);
    cotangent_.assign(window, 0.0);
    output_.assign(window, 0.0);
    partials_.assign(static_cast<std::size_t>(split_.local_partials() * Engine::kSumWidth), 0.0);
    DistributedBackend::use_layout(split_.layout());
  }

  Index state_size() const { return kFields * engine_.grid().cells(); }
  Index parameter_size() const { return kParameters; }
  const std::array<Index, kDimension>& grid_sizes() const { return engine_.grid().sizes(); }
  const RowLayout& layout() const { return *split_.layout(); }
  const Model& model() const { return engine_.model(); }
  // This rank's slabs: [first_slab(), first_slab() + local_slabs()) along dimension 0 (1-D: its
  // cells).
  Index first_slab() const { return split_.first_slab(); }
  Index local_slabs() const { return split_.local_slabs(); }
  // Slabs copied from each neighbour before a product: the stencil's reach along dimension 0
  // (1-D: that many cells and 128 more).
  Index halo_slabs() const { return split_.halo_slabs(); }

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
    split_.fill_window(y, state_);
    engine_.rhs(state_.data(), theta.local.data(), output_.data(), first_slab(),
                first_slab() + local_slabs());
    split_.take_own_slabs(output_, f);
  }

  // out = (∂f/∂y) w.
  void jvp(double /*t*/, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    require_split(y, theta, out, "jvp");
    require_split(w, theta, out, "jvp");
    split_.fill_window(y, state_);
    split_.fill_window(w, cotangent_);
    engine_.jvp(state_.data(), theta.local.data(), cotangent_.data(), output_.data(), first_slab(),
                first_slab() + local_slabs());
    split_.take_own_slabs(output_, out);
  }

  // out_y = (∂f/∂y)ᵀ v (this rank's slabs), out_theta = (∂f/∂θ)ᵀ v (replicated).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    require_split(y, theta, out_y, "vjp");
    require_split(v, theta, out_y, "vjp");
    if (out_theta.layout || out_theta.local.size() != kParameters)
      detail::fail<InvalidArgument>(kName, " vjp: out_theta must be a replicated vector of ",
                                    kParameters);
    split_.fill_window(y, state_);
    split_.fill_window(v, cotangent_);
    engine_.vjp(state_.data(), theta.local.data(), cotangent_.data(), output_.data(),
                partials_.data(), split_.slots().data());
    split_.take_own_slabs(output_, out_y);
    split_.fold_slab_partials(partials_, Engine::kSumWidth,
                              std::span<double>(out_theta.local.data(), kParameters));
  }

 private:
  static constexpr const char* kName = "rwd::DistributedStencilProblem";

  // What the split needs of the model on this grid.
  static detail::SlabStencil slab_stencil(const Engine& engine) {
    detail::SlabStencil stencil;
    stencil.slabs = engine.grid().sizes()[0];
    stencil.slab_cells = engine.grid().slab_cells();
    stencil.fields = kFields;
    for (int s = 0; s < Engine::kPoints; ++s) stencil.offsets.push_back(Model::stencil[s][0]);
    stencil.boundary = Model::boundaries[0];
    if constexpr (kDimension == 1) {
      stencil.block_cells = engine.grid().equal_block_cells();
      if (stencil.block_cells == 0)
        detail::refuse_unequal_line(kName, stencil.slabs, engine.grid().span(0));
    }
    return stencil;
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

  void require_split(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments(kName, what, split_.layout().get(), y, theta, out, kParameters);
  }

  Engine engine_;
  detail::SlabSplit split_;
  mutable std::vector<double> state_, cotangent_, output_;  // windows (field-major)
  mutable std::vector<double> partials_;                    // per own slab, kSumWidth values
};

}  // namespace rwd
