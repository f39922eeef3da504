// rewind/problems/detail/stencil_grid.hpp — the grid of a stencil model (rewind/stencil_model.hpp):
// how a neighbour's index is mapped by the boundaries, the view a cell update reads its
// neighbourhood through, and the fixed cut of the grid into blocks and lines that every loop of a
// stencil problem walks. Not public API: include rewind/stencil_model.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// The grid's dimension D: the number of `boundaries`.
template <class M>
inline constexpr int stencil_dimension =
    static_cast<int>(std::tuple_size_v<std::remove_cvref_t<decltype(M::boundaries)>>);

// A neighbour that lies beyond a fixed wall: it reads the wall's value, and nothing flows back.
inline constexpr Index kStencilWall = -1;

// Cells per chunk of a run in the vjp: the chunk's local gradients (F·S + P values per cell) stay
// in the level-1 cache between its two passes (stencil_runs.hpp). Chunks start at the start of a
// block's run of inside cells, so a window that visits part of a block (a 1-D grid split across
// processes) visits whole chunks.
inline constexpr Index kStencilChunk = 128;

// A slab the vjp does not visit (StencilEngine::vjp's `slots`), and one it visits whose parameter
// part is dropped (another process sums it).
inline constexpr Index kSlabSkipped = -2;
inline constexpr Index kSlabUnsummed = -1;

// Index i along a dimension of n cells, i within one stencil span of [0, n), mapped into the
// grid by the dimension's boundary (kStencilWall beyond a fixed wall).
inline Index map_stencil_index(Index i, Index n, Boundary boundary) {
  if (i >= 0 && i < n) return i;
  switch (boundary) {
    case Boundary::periodic:
      return i < 0 ? i + n : i - n;
    case Boundary::reflecting:
      return i < 0 ? -i - 1 : 2 * n - 1 - i;
    case Boundary::fixed:
      break;
  }
  return kStencilWall;
}

inline const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::periodic:
      return "periodic";
    case Boundary::fixed:
      return "fixed";
    case Boundary::reflecting:
      return "reflecting";
  }
  return "?";
}

// What the kernel's `x` is: the values of one cell's neighbourhood, [field][point]. Checked: every
// read is compared with the declared shape (field < F, point < S) first.
template <class T, int D, int F, int S, bool Checked>
class StencilNeighbourhood {
 public:
  using Scalar = T;
  static constexpr int fields = F;
  static constexpr int points = S;

  StencilNeighbourhood(const T* values, const GridCell<D>& at) : values_(values), at_(at) {}

  const T& operator()(int field, int point) const {
    if constexpr (Checked) {
      if (field < 0 || field >= F || point < 0 || point >= S) refuse_read(field, point);
    }
    return values_[field * S + point];
  }

 private:
  [[noreturn]] void refuse_read(int field, int point) const {
    std::string cell = "(";
    for (int d = 0; d < D; ++d)
      cell += (d > 0 ? ", " : "") + std::to_string(at_.index[static_cast<std::size_t>(d)]);
    fail<InvalidArgument>("rwd::stencil_problem: the cell update read x(", field, ", ", point,
                          ") at cell ", cell, "), outside its declared shape (fields 0 … ", F - 1,
                          ", points 0 … ", S - 1,
                          " of `stencil`); declare every neighbour the update reads");
  }

  const T* values_;
  const GridCell<D>& at_;
};

// The grid: sizes, the stencil as index offsets, the boundaries, and the fixed cut into blocks
// along dimension 0 that every loop uses (see "Determinism" at the top of
// rewind/stencil_model.hpp).
template <int D, int S>
class StencilGrid {
 public:
  // Cells per block, at least: enough work to share out among threads, small enough for many
  // blocks on a large grid. Changing it changes the order of the vjp's sums (not their terms).
  static constexpr Index kBlockCells = 4096;

  // The length of a 1-D grid's blocks where they can all be equal: the smallest divisor of the
  // grid's n cells in [least, 4·least], least = max(kBlockCells, span + kStencilChunk), or n
  // itself below that (one block). Equal blocks are what processes own whole and what a split
  // state's sums are folded by (rwd::RowLayout's rows); least leaves room for a neighbour's
  // chunks within one block. 0 where n has no such divisor: the blocks are then ⌊n/kBlockCells⌋
  // cuts of nearly equal length, and the grid does not split across processes.
  static Index line_block_cells(Index n, Index span) {
    const Index least = std::max(kBlockCells, span + kStencilChunk);
    if (n <= least) return n;
    for (Index length = least; length <= std::min(n, 4 * least); ++length)
      if (n % length == 0) return length;
    return 0;
  }

  StencilGrid(const std::array<Index, D>& sizes, const std::array<Offset<D>, S>& stencil,
              const std::array<Boundary, D>& boundaries)
      : sizes_(sizes), boundaries_(boundaries) {
    cells_ = 1;
    for (int d = 0; d < D; ++d) cells_ *= sizes_[d];
    stored_slabs_ = sizes_[0];
    for (int s = 0; s < S; ++s)
      for (int d = 0; d < D; ++d) offsets_[s][d] = stencil[s][d];
    last_lo_ = 0;
    last_hi_ = sizes_[D - 1];
    for (int s = 0; s < S; ++s) {
      const Index o = offsets_[s][D - 1];
      last_lo_ = std::max(last_lo_, -o);
      last_hi_ = std::min(last_hi_, sizes_[D - 1] - o);
    }
    const Index slab = cells_ / sizes_[0];
    const Index block_rows = std::max({Index{1}, span(0), (kBlockCells + slab - 1) / slab});
    blocks_ = std::max<Index>(1, sizes_[0] / block_rows);
    if constexpr (D == 1) {
      line_block_cells_ = line_block_cells(sizes_[0], span(0));
      if (line_block_cells_ > 0) blocks_ = sizes_[0] / line_block_cells_;
    }
    colours_ =
        blocks_ == 1 ? 1 : (boundaries_[0] == Boundary::periodic && blocks_ % 2 == 1 ? 3 : 2);
  }

  Index cells() const { return cells_; }
  const std::array<Index, D>& sizes() const { return sizes_; }
  // max offset − min offset along dimension d.
  Index span(int d) const {
    Index lo = 0, hi = 0;
    for (int s = 0; s < S; ++s) {
      lo = std::min<Index>(lo, offsets_[s][d]);
      hi = std::max<Index>(hi, offsets_[s][d]);
    }
    return hi - lo;
  }

  Index blocks() const { return blocks_; }
  int colours() const { return colours_; }
  // Blocks of one colour never touch the same entry: alternate blocks, and the last of an odd
  // number around a periodic dimension 0 alone.
  int colour_of(Index b) const {
    return colours_ == 3 && b == blocks_ - 1 ? 2 : static_cast<int>(b % 2);
  }
  Index block_begin(Index b) const { return b * sizes_[0] / blocks_; }
  // A 1-D grid's block length where its blocks are equal (line_block_cells), else 0.
  Index equal_block_cells() const { return line_block_cells_; }

  // A 1-D grid's block b runs its inside cells (no point crossing a boundary) as chunks of
  // kStencilChunk cells from run_begin(b) to run_end(b); the cells before and after go one at a
  // time. chunk_floor and chunk_ceil round a cell of the block down and up to where a chunk
  // starts or the run ends (a cell outside the run stays): the bounds of a part of the block
  // whose visit computes whole chunks, as the whole block's does.
  Index run_begin(Index b) const {
    return std::clamp(last_lo_, block_begin(b), block_begin(b + 1));
  }
  Index run_end(Index b) const { return std::clamp(last_hi_, run_begin(b), block_begin(b + 1)); }
  Index chunk_floor(Index b, Index x) const {
    const Index begin = run_begin(b), end = run_end(b);
    if (x <= begin || x >= end) return x;
    return begin + (x - begin) / kStencilChunk * kStencilChunk;
  }
  Index chunk_ceil(Index b, Index x) const {
    const Index begin = run_begin(b), end = run_end(b);
    if (x <= begin || x >= end) return x;
    return std::min(end, begin + (x - begin + kStencilChunk - 1) / kStencilChunk * kStencilChunk);
  }

  // Where the slabs (the cells of one index along dimension 0) are stored. By default slab i is
  // at position i of a grid-sized array. A problem split across processes stores its own slabs
  // and copies of its neighbours' in a window of `stored` slabs instead: storage[i] is slab i's
  // position there, −1 for a slab not held (never read: the caller visits only slabs whose
  // neighbourhood it holds). Values are field-major over the stored cells (stored_cells()).
  //
  // On a 1-D grid the slabs are its cells, and a window holds consecutive cells (around a
  // periodic grid): cell i at position i − o for the window's first cell o (which may lie below
  // 0 or beyond n − 1 around a periodic grid: then i − o ± n). storage must say so; the grid
  // keeps o alone, not a position per cell.
  void store_slabs(std::vector<Index> storage, Index stored) {
    if (static_cast<Index>(storage.size()) != sizes_[0] || stored < 1)
      fail<InvalidArgument>("StencilGrid::store_slabs: ", storage.size(), " positions for ",
                            sizes_[0], " slabs, ", stored, " stored");
    stored_slabs_ = stored;
    if constexpr (D == 1) {
      place_line_window(storage);
    } else {
      storage_ = std::move(storage);
    }
  }
  Index slab_cells() const { return cells_ / sizes_[0]; }
  Index stored_cells() const { return stored_slabs_ * slab_cells(); }
  Index slab_position(Index i) const {
    if constexpr (D == 1) {
      if (!windowed_) return i;
      const Index at = i - window_origin_;
      if (at < 0) return at + sizes_[0];
      return at >= stored_slabs_ ? at - sizes_[0] : at;
    } else {
      return storage_.empty() ? i : storage_[static_cast<std::size_t>(i)];
    }
  }

  // visit(at, c, neighbours) for every cell c of block b in memory order: `neighbours[s]` is the
  // linear index of the cell the stencil's point s reads, or kStencilWall. With a run visitor,
  // the cells of a line whose points all lie inside the grid without wrapping go to
  // run(at, first, begin, end, shift) instead, as one run [begin, end) of the line that starts at
  // cell `first`: cell first + j reads point s at cell shift[s] + j (at.index is that of the
  // line; the run sets the last index itself).
  template <class Visit, class Run = std::nullptr_t>
  void for_each_cell(Index b, Visit&& visit, Run&& run = nullptr) const {
    const Index lo = block_begin(b), hi = block_begin(b + 1);
    GridCell<D> at{{}, sizes_};
    if constexpr (D == 1) {
      line_of_cells(at, lo, hi, visit, run);
    } else {
      for (Index i = lo; i < hi; ++i) for_each_slab_cell(i, visit, run);
    }
  }

  // The same for the cells [begin, end) of a 1-D grid's block b alone (bounds from chunk_floor
  // and chunk_ceil for a vjp's visit: then its chunks are the whole block's).
  template <class Visit, class Run = std::nullptr_t>
  void for_each_cell_of(Index b, Index begin, Index end, Visit&& visit, Run&& run = nullptr) const {
    static_assert(D == 1, "StencilGrid: parts of blocks are walked on a 1-D grid");
    if (begin < block_begin(b) || end > block_begin(b + 1) || begin > end)
      fail<InvalidArgument>("StencilGrid::for_each_cell_of: cells [", begin, ", ", end,
                            ") are not within block ", b);
    GridCell<D> at{{}, sizes_};
    line_of_cells(at, begin, end, visit, run);
  }

  // The same for the cells of slab i alone (D ≥ 2: a slab is whole lines), in memory order.
  template <class Visit, class Run = std::nullptr_t>
  void for_each_slab_cell(Index i, Visit&& visit, Run&& run = nullptr) const {
    static_assert(D >= 2, "StencilGrid: a 1-D grid's slabs are single cells; walk blocks");
    GridCell<D> at{{}, sizes_};
    at.index[0] = i;
    if constexpr (D == 2) {
      line(at, 0, sizes_[1], visit, run);
    } else {
      for (Index k = 0; k < sizes_[1]; ++k) {
        at.index[1] = k;
        line(at, 0, sizes_[2], visit, run);
      }
    }
  }

 private:
  // Cells [begin, end) of the line along the last dimension through `at` (its leading indices
  // set): the leading dimensions' mapping once per line, the last one's per cell (none inside,
  // where no point crosses a boundary: those cells form one run when there is a run visitor).
  template <class Visit, class Run>
  void line(GridCell<D>& at, Index begin, Index end, Visit& visit, Run& run) const {
    static_assert(D >= 2, "StencilGrid: a 1-D grid's line is line_of_cells");
    constexpr int last = D - 1;
    const Index n = sizes_[last];
    std::array<Index, S> base;
    Index first = 0;
    for (int d = 0; d < last; ++d)
      first = first * sizes_[d] + (d == 0 ? slab_position(at.index[0]) : at.index[d]);
    first *= n;
    bool walled = false;
    for (int s = 0; s < S; ++s) {
      Index lin = 0;
      for (int d = 0; d < last && lin != kStencilWall; ++d) {
        Index m = map_stencil_index(at.index[d] + offsets_[s][d], sizes_[d], boundaries_[d]);
        if (d == 0 && m != kStencilWall) m = slab_position(m);
        lin = m == kStencilWall ? kStencilWall : lin * sizes_[d] + m;
      }
      base[s] = lin == kStencilWall ? kStencilWall : lin * n;
      walled = walled || base[s] == kStencilWall;
    }
    std::array<Index, S> neighbours;
    auto cells = [&](Index from, Index to) {
      for (Index j = from; j < to; ++j) {
        at.index[last] = j;
        const bool inside = j >= last_lo_ && j < last_hi_;
        for (int s = 0; s < S; ++s) {
          const Index m = inside ? j + offsets_[s][last]
                                 : map_stencil_index(j + offsets_[s][last], n, boundaries_[last]);
          neighbours[s] = base[s] == kStencilWall || m == kStencilWall ? kStencilWall : base[s] + m;
        }
        visit(static_cast<const GridCell<D>&>(at), first + j, neighbours);
      }
    };
    if constexpr (!std::is_same_v<std::remove_cvref_t<Run>, std::nullptr_t>) {
      if (!walled) {
        const Index lo = std::clamp(last_lo_, begin, end), hi = std::clamp(last_hi_, lo, end);
        cells(begin, lo);
        std::array<Index, S> shift;
        for (int s = 0; s < S; ++s) shift[s] = base[s] + offsets_[s][last];
        if (lo < hi) run(static_cast<const GridCell<D>&>(at), first, lo, hi, shift);
        cells(hi, end);
        return;
      }
    }
    cells(begin, end);
  }

  // The cells [begin, end) of a 1-D grid, at their positions in the stored cells: a neighbour
  // mapped by the boundary, then placed; the run's positions from `begin`'s (a window's cells are
  // consecutive, and a run's points do not cross the grid's boundary).
  template <class Visit, class Run>
  void line_of_cells(GridCell<D>& at, Index begin, Index end, Visit& visit, Run& run) const {
    const Index n = sizes_[0];
    const Index first = begin < end ? slab_position(begin) - begin : 0;
    std::array<Index, S> neighbours;
    auto cells = [&](Index from, Index to) {
      for (Index j = from; j < to; ++j) {
        at.index[0] = j;
        for (int s = 0; s < S; ++s) {
          const Index m = map_stencil_index(j + offsets_[s][0], n, boundaries_[0]);
          neighbours[s] = m == kStencilWall ? kStencilWall : slab_position(m);
        }
        visit(static_cast<const GridCell<D>&>(at), first + j, neighbours);
      }
    };
    if constexpr (!std::is_same_v<std::remove_cvref_t<Run>, std::nullptr_t>) {
      const Index lo = std::clamp(last_lo_, begin, end), hi = std::clamp(last_hi_, lo, end);
      cells(begin, lo);
      std::array<Index, S> shift;
      for (int s = 0; s < S; ++s) shift[s] = first + offsets_[s][0];
      if (lo < hi) run(static_cast<const GridCell<D>&>(at), first, lo, hi, shift);
      cells(hi, end);
    } else {
      cells(begin, end);
    }
  }

  // A 1-D window's first cell o, from the positions (see store_slabs), checked against every
  // held cell's.
  void place_line_window(const std::vector<Index>& storage) {
    const Index n = sizes_[0];
    const auto held =
        std::find_if(storage.begin(), storage.end(), [](Index at) { return at >= 0; });
    if (held == storage.end())
      fail<InvalidArgument>("StencilGrid::store_slabs: the window holds no cell");
    window_origin_ = (held - storage.begin()) - *held;
    windowed_ = true;
    for (Index i = 0; i < n; ++i) {
      const Index at = storage[static_cast<std::size_t>(i)];
      if (at >= 0 && at != slab_position(i))
        fail<InvalidArgument>("StencilGrid::store_slabs: cell ", i, " at position ", at,
                              "; a 1-D window holds consecutive cells (cell i at i − ",
                              window_origin_, ", modulo ", n, ")");
    }
  }

  std::array<Index, D> sizes_;
  std::array<Boundary, D> boundaries_;
  std::array<std::array<Index, D>, S> offsets_{};
  Index cells_ = 0;
  std::vector<Index> storage_;  // slab i's stored position (empty: i)
  Index stored_slabs_ = 0;
  Index last_lo_ = 0, last_hi_ = 0;  // cells of a line whose points all stay inside it
  Index blocks_ = 1;
  int colours_ = 1;
  Index line_block_cells_ = 0;  // D = 1: the blocks' equal length, or 0
  bool windowed_ = false;       // D = 1: the stored cells are a window from window_origin_
  Index window_origin_ = 0;
};

// A growable per-thread buffer of doubles (the vjp's per-block parameter sums): allocates only
// when a larger grid than any before comes along on this thread.
inline double* stencil_scratch(Index count) {
  thread_local std::vector<double> scratch;
  if (static_cast<Index>(scratch.size()) < count) scratch.resize(static_cast<std::size_t>(count));
  return scratch.data();
}

}  // namespace rwd::detail
