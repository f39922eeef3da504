// rewind/distributed/slab_split.hpp — a stencil grid's slabs split across MPI ranks: which slabs
// a rank owns, the window of slabs it computes on (its own with halos from its neighbours), the
// halo exchange, and the fold of per-slab parameter partials. What rwd::DistributedStencilProblem
// (a stencil model compiled in) and rwd::DistributedPluginStencilProblem (one loaded from a
// plugin) share; the cell updates themselves run in rwd::detail::StencilEngine on the window, in
// this process or inside the plugin. distributed_stencil.hpp's top comment says what is exchanged
// and why the bits do not depend on the rank count.
//
// A 1-D grid's slabs are its cells. Its ranks own whole blocks of the grid's equal cut
// (StencilGrid::line_block_cells: rwd::RowLayout's rows are the blocks, so a split state's sums
// and the vjp's per-block parameter partials fold in block order), and the halos are the
// stencil's span plus one chunk of cells (kStencilChunk): the vjp visits a neighbour's block only
// in the whole chunks that reach this rank's cells.
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/problems/detail/stencil_grid.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// What the split needs of a stencil model on its grid: the grid along dimension 0 and the
// stencil's reach along it.
struct SlabStencil {
  Index slabs = 0;                         // n_0: the grid's size along dimension 0
  Index slab_cells = 0;                    // the cells of one slab (n_1 · … · n_{D−1})
  Index fields = 0;                        // values per cell
  std::vector<Index> offsets;              // each stencil point's offset along dimension 0
  Boundary boundary = Boundary::periodic;  // dimension 0's
  Index block_cells = 0;                   // a 1-D grid's equal block length (slab_cells 1); else 0

  // The highest offset less the lowest (0 included): how far the stencil reaches.
  Index span() const {
    Index lo = 0, hi = 0;
    for (Index o : offsets) {
      lo = std::min(lo, o);
      hi = std::max(hi, o);
    }
    return hi - lo;
  }
};

// Refuses a 1-D grid of n cells whose blocks cannot be equal (StencilGrid::line_block_cells is 0).
[[noreturn]] inline void refuse_unequal_line(const std::string& owner, Index n, Index span) {
  const Index least = std::max(StencilGrid<1, 1>::kBlockCells, span + kStencilChunk);
  fail<InvalidArgument>(
      owner,
      ": a 1-D grid splits across ranks by blocks of one length, a divisor of its cells from ",
      least, " to ", 4 * least, ", and n = ", n, " has none: choose n with one (a multiple of ",
      least, ", say), or run it on one process");
}

class SlabSplit {
 public:
  // owner: the problem's name, for refusals. Refuses a rank that would own fewer slabs than the
  // stencil reaches along dimension 0 (or none), naming the largest rank count that works.
  SlabSplit(const std::string& owner, const Communicator& comm, SlabStencil stencil)
      : stencil_(std::move(stencil)),
        span_(stencil_.span()),
        halo_(stencil_.block_cells > 0 ? span_ + kStencilChunk : span_),
        layout_(std::make_shared<RowLayout>(checked(owner, comm), stencil_.fields, layout_rows(),
                                            layout_row_length())),
        slab_rows_(comm, 1, layout_rows(), layout_row_length()) {
    place_window(owner);
  }

  const std::shared_ptr<RowLayout>& layout() const { return layout_; }
  // This rank's slabs: [first_slab(), first_slab() + local_slabs()) (1-D: cells).
  Index first_slab() const { return layout_->first_row() * slabs_per_row(); }
  Index local_slabs() const { return layout_->local_rows() * slabs_per_row(); }
  // Slabs copied from each neighbour before a product: the stencil's reach along dimension 0
  // (1-D: that many cells and one chunk more).
  Index halo_slabs() const { return halo_; }
  // The window: [halo slabs above | own slabs | halo slabs below]. storage()[i] is global slab
  // i's position in it, or −1 (not held): StencilGrid::store_slabs' arguments (one per slab; on
  // a 1-D grid one per cell, made when asked for).
  std::vector<Index> storage() const {
    const Index n = stencil_.slabs, first = first_slab(), own = local_slabs();
    const bool periodic = stencil_.boundary == Boundary::periodic;
    std::vector<Index> stored(static_cast<std::size_t>(n), -1);
    // Own slabs first, so a slab both owned and a halo copy (one rank around a periodic
    // dimension) is read from the owned copy.
    for (Index i = 0; i < own; ++i) stored[static_cast<std::size_t>(first + i)] = halo_ + i;
    auto place = [&](Index global, Index position) {
      if (periodic) global = ((global % n) + n) % n;
      if (global < 0 || global >= n) return;  // beyond a wall: never read
      Index& at = stored[static_cast<std::size_t>(global)];
      if (at < 0) at = position;
    };
    for (Index p = 0; p < halo_; ++p) {
      place(first - halo_ + p, p);
      place(first + own + p, halo_ + own + p);
    }
    return stored;
  }
  Index stored_slabs() const { return 2 * halo_ + local_slabs(); }
  // The vjp's parameter partials this rank sums: one per own slab (1-D: per own block).
  Index local_partials() const { return layout_->local_rows(); }
  // Values of one window array (field-major over the stored cells).
  Index window_values() const { return stencil_.fields * stored_slabs() * stencil_.slab_cells; }
  // Per global slab (1-D: per block), the vjp's visit (StencilEngine::vjp's slots):
  // kSlabSkipped, kSlabUnsummed, or the own slab (block) its parameter partial goes to.
  const std::vector<Index>& slots() const { return slots_; }

  // window ← x's own slabs, then the halos from the neighbouring ranks (a collective).
  void fill_window(const DistributedVector& x, std::vector<double>& window) const {
    const Index own = own_values(), stored = stored_values(), halo = halo_values();
    for (Index k = 0; k < stencil_.fields; ++k)
      std::copy_n(x.local.data() + k * own, own, window.data() + k * stored + halo);
    if (halo_ > 0) exchange_halos(window);
  }

  // out's own slabs ← the window's.
  void take_own_slabs(const std::vector<double>& window, DistributedVector& out) const {
    const Index own = own_values(), stored = stored_values(), halo = halo_values();
    for (Index k = 0; k < stencil_.fields; ++k)
      std::copy_n(window.data() + k * stored + halo, own, out.local.data() + k * own);
  }

  // total = Σ over the grid's slabs (1-D: blocks), in order, of their parameter partials:
  // `partials` holds `width` values per own slab (the vjp's layout), of which the first
  // total.size() are summed. The one-process sum's bits on every rank (a collective).
  void fold_slab_partials(std::span<const double> partials, Index width,
                          std::span<double> total) const {
    const Index count = static_cast<Index>(total.size());
    if (count == 0) return;
    const Index own = local_partials();
    mine_.resize(static_cast<std::size_t>(own * count));
    for (Index r = 0; r < own; ++r)
      std::copy_n(partials.data() + r * width, count, mine_.data() + r * count);
    slab_rows_.fold_row_values(mine_, static_cast<int>(count), total);
  }

 private:
  // The layout's rows: the slabs, or a 1-D grid's blocks (of block_cells slabs, its cells).
  Index slabs_per_row() const { return stencil_.block_cells > 0 ? stencil_.block_cells : 1; }
  Index layout_rows() const { return stencil_.slabs / slabs_per_row(); }
  Index layout_row_length() const {
    return stencil_.block_cells > 0 ? stencil_.block_cells : stencil_.slab_cells;
  }

  // The communicator, once every rank is known to own at least span_ slabs (and one); on a 1-D
  // grid, a block or more (a block is longer than the halo).
  Communicator checked(const std::string& owner, const Communicator& comm) const {
    const Index ranks = comm.size(), slabs = stencil_.slabs;
    if (stencil_.block_cells > 0) {
      const Index blocks = layout_rows();
      if (blocks < ranks)
        fail<InvalidArgument>(owner, ": ", ranks, " ranks over a 1-D grid of ", slabs,
                              " cells, cut into ", blocks, " block", blocks == 1 ? "" : "s", " of ",
                              stencil_.block_cells,
                              " cells: every rank needs a block or more: use at most ", blocks,
                              " rank", blocks == 1 ? "" : "s");
      const Index most = (blocks + ranks - 1) / ranks * stencil_.block_cells;
      if (ranks > 1 && most + 2 * halo_ > slabs)
        fail<InvalidArgument>(owner, ": the stencil reaches ", span_,
                              " cells, and a rank's window (its cells and ", halo_,
                              " on each side) would hold more than the grid's ", slabs,
                              " cells: run it on one rank");
      return comm;
    }
    const Index fewest = slabs / ranks;  // RowLayout's split: ⌊n/R⌋ or ⌈n/R⌉ slabs per rank
    if (fewest < std::max<Index>(1, span_))
      fail<InvalidArgument>(
          owner, ": ", ranks, " ranks over n_0 = ", slabs, " slabs leave a rank ", fewest,
          " slabs, and the stencil reaches ", span_,
          " slabs along dimension 0 (every rank needs at least that many, and one): use at most ",
          slabs / std::max<Index>(1, span_), " ranks");
    return comm;
  }

  Index own_values() const { return local_slabs() * stencil_.slab_cells; }
  Index halo_values() const { return halo_ * stencil_.slab_cells; }
  Index stored_values() const { return stored_slabs() * stencil_.slab_cells; }

  // Which slabs the vjp visits: every slab whose stencil touches an own slab, its neighbourhood
  // in the window (1-D: the own blocks, and the blocks next to them whose cells reach them).
  void place_window(const std::string& owner) {
    const Index n = stencil_.slabs, first = first_slab(), own = local_slabs();
    if (stencil_.block_cells > 0) {
      place_line_blocks();
      return;
    }
    const std::vector<Index> stored = storage();
    auto owned = [&](Index g) { return g >= first && g < first + own; };
    slots_.assign(static_cast<std::size_t>(n), kSlabSkipped);
    for (Index g = 0; g < n; ++g) {
      bool touches = false, held = stored[static_cast<std::size_t>(g)] >= 0;
      for (Index offset : stencil_.offsets) {
        const Index m = map_stencil_index(g + offset, n, stencil_.boundary);
        if (m == kStencilWall) continue;
        touches = touches || owned(m);
        held = held && stored[static_cast<std::size_t>(m)] >= 0;
      }
      if (!touches) continue;
      if (!held)
        fail<Error>(owner, ": slab ", g,
                    " touches this rank's slabs but its neighbourhood is not in the window (an "
                    "internal error)");
      slots_[static_cast<std::size_t>(g)] = owned(g) ? g - first : kSlabUnsummed;
    }
  }

  // A 1-D grid's slots: the own blocks summed; the block below visited (unsummed) where its
  // cells reach up into them, the block above where its cells reach down.
  void place_line_blocks() {
    const Index blocks = layout_rows(), first = layout_->first_row(), own = layout_->local_rows();
    const bool periodic = stencil_.boundary == Boundary::periodic;
    const auto& offsets = stencil_.offsets;
    slots_.assign(static_cast<std::size_t>(blocks), kSlabSkipped);
    for (Index b = 0; b < own; ++b) slots_[static_cast<std::size_t>(first + b)] = b;
    auto visit = [&](Index b) {
      if (periodic) b = (b + blocks) % blocks;
      if (b < 0 || b >= blocks) return;  // beyond a wall
      Index& slot = slots_[static_cast<std::size_t>(b)];
      if (slot == kSlabSkipped) slot = kSlabUnsummed;
    };
    if (std::ranges::any_of(offsets, [](Index o) { return o > 0; })) visit(first - 1);
    if (std::ranges::any_of(offsets, [](Index o) { return o < 0; })) visit(first + own);
  }

  // Two MPI_Sendrecv per window: first slabs up, last slabs down; a periodic dimension 0 wraps
  // around, a fixed or reflecting one has no rank beyond its ends.
  void exchange_halos(std::vector<double>& window) const {
    const Communicator& comm = layout_->communicator();
    const Index own = own_values(), stored = stored_values(), halo = halo_values();
    const Index fields = stencil_.fields;
    const bool periodic = stencil_.boundary == Boundary::periodic;
    const int rank = comm.rank(), ranks = comm.size();
    const int up = rank > 0 ? rank - 1 : (periodic ? ranks - 1 : MPI_PROC_NULL);
    const int down = rank + 1 < ranks ? rank + 1 : (periodic ? 0 : MPI_PROC_NULL);
    const std::size_t count = static_cast<std::size_t>(fields * halo);
    send_.resize(count);
    receive_.resize(count);
    // Field k's `halo` values from window offset `from` into the message, and back at `to`.
    auto pack = [&](Index from) {
      for (Index k = 0; k < fields; ++k)
        std::copy_n(window.data() + k * stored + from, halo, send_.data() + k * halo);
    };
    auto unpack = [&](Index to) {
      for (Index k = 0; k < fields; ++k)
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

  SlabStencil stencil_;
  Index span_;  // the stencil's reach along dimension 0
  Index halo_;  // slabs copied from each neighbour
  std::shared_ptr<RowLayout> layout_;
  RowLayout slab_rows_;  // the slabs as one field: the parameter partials' fold
  std::vector<Index> slots_;
  mutable std::vector<double> send_, receive_;  // one halo message
  mutable std::vector<double> mine_;            // the own slabs' partials, packed for the fold
};

}  // namespace rwd::detail
