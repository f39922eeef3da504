// rewind/problems/detail/stencil_engine.hpp — what a stencil model's problem computes, on raw
// arrays: the declarations checked, the rhs, jvp and vjp loops over the grid's slabs and blocks,
// and the Jacobian's pattern and values. rwd::StencilProblem (rewind/stencil_model.hpp) runs it on
// a whole grid; rwd::DistributedStencilProblem (rewind/distributed/distributed_stencil.hpp) on one
// process's slabs and its neighbours' copies. Not public API: rewind/stencil_model.hpp's top
// comment says what is computed, in which order and why.
//
// Arrays are field-major over the grid's stored cells (StencilGrid::stored_cells(): the whole
// grid unless the grid stores a window of slabs), so value (field k, stored cell c) is at
// k·stored_cells() + c. A slab is the cells of one index along dimension 0.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/model.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/detail/stencil_grid.hpp"
#include "rewind/problems/detail/stencil_runs.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

template <class M>
inline constexpr bool kIsOffsetArray = false;
template <int D, std::size_t S>
inline constexpr bool kIsOffsetArray<std::array<Offset<D>, S>> = true;

template <class Model>
class StencilEngine {
  static_assert(
      requires { Model::field_names; } && requires { Model::parameter_names; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<const char*, F> "
      "field_names` and `… parameter_names` (an empty array for a model without parameters)");
  static_assert(kIsNameArray<std::remove_cvref_t<decltype(Model::field_names)>> &&
                    kIsNameArray<std::remove_cvref_t<decltype(Model::parameter_names)>>,
                "rwd::stencil_problem: field_names and parameter_names must be "
                "std::array<const char*, N>");
  static_assert(
      requires { Model::boundaries; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<rwd::Boundary, D> "
      "boundaries`, one per dimension of the grid");
  static_assert(
      requires { Model::stencil; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<rwd::Offset<D>, S> "
      "stencil`, the offsets of the neighbours its cell update reads");
  static_assert(kIsOffsetArray<std::remove_cvref_t<decltype(Model::stencil)>>,
                "rwd::stencil_problem: `stencil` must be std::array<rwd::Offset<D>, S>");

 public:
  static constexpr int kDimension = stencil_dimension<Model>;
  static_assert(kDimension >= 1 && kDimension <= 3,
                "rwd::stencil_problem: the grid has 1, 2 or 3 dimensions (`boundaries`' size)");
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(Model::stencil)>,
                               std::array<Offset<kDimension>, Model::stencil.size()>>,
                "rwd::stencil_problem: the stencil's offsets must have one entry per dimension "
                "(rwd::Offset<D> with D = the size of `boundaries`)");
  static constexpr int kFields = static_cast<int>(name_count<decltype(Model::field_names)>);
  static constexpr int kParameters = static_cast<int>(name_count<decltype(Model::parameter_names)>);
  static constexpr int kPoints = static_cast<int>(Model::stencil.size());
  // Derivative components of one cell's evaluation: every field at every point, then θ.
  static constexpr int kComponents = kFields * kPoints + kParameters;
  // Parameter partials are stored in groups of kSumWidth (at least one, for P = 0).
  static constexpr int kSumWidth = std::max(1, kParameters);
  using Derivative = ForwardScalar<std::max(1, kComponents)>;
  using Directional = ForwardScalar<1>;
  // jvp_vjp's scalar: a derivative component per Derivative's over one directional component.
  using Nested = Sacado::Fad::SFad<Directional, std::max(1, kComponents)>;
  using Cell = GridCell<kDimension>;
  using Grid = StencilGrid<kDimension, kPoints>;

  template <class T, bool Checked>
  using Neighbourhood = StencilNeighbourhood<T, kDimension, kFields, kPoints, Checked>;

  static_assert(
      requires(const Model& m, const Neighbourhood<double, false>& x, const double* p,
               const Cell& at, double* f) { m.cell(x, p, at, f); },
      "rwd::stencil_problem: the model needs `template <class T, class Neighbourhood> void "
      "cell(const Neighbourhood& x, const T* p, const rwd::GridCell<D>& at, T* f) const`");
  static constexpr bool kHasDefaultParameters = requires { Model::default_parameters; };
  static constexpr bool kHasWallValues = requires { Model::wall_values; };

  static constexpr const char* kName = "rwd::stencil_problem";

  // Checks the declarations and the grid's sizes (InvalidArgument naming the value and the rule).
  StencilEngine(Model model, const std::array<Index, kDimension>& sizes, StencilOptions options)
      : model_(std::move(model)),
        grid_(checked_sizes(sizes), Model::stencil, Model::boundaries),
        options_(options) {
    if constexpr (kHasDefaultParameters)
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::default_parameters)>> ==
                        static_cast<std::size_t>(kParameters),
                    "rwd::stencil_problem: default_parameters must have one value per parameter");
    if constexpr (kHasWallValues) {
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::wall_values)>> ==
                        static_cast<std::size_t>(kFields),
                    "rwd::stencil_problem: wall_values must have one value per field");
      for (int k = 0; k < kFields; ++k) wall_[k] = Model::wall_values[k];
    }
  }

  const Model& model() const { return model_; }
  const Grid& grid() const { return grid_; }
  Grid& grid() { return grid_; }
  const StencilOptions& options() const { return options_; }

  // The lowest and highest offset of the stencil along dimension d.
  static constexpr Index lowest_offset(int d) {
    Index lo = 0;
    for (int s = 0; s < kPoints; ++s) lo = std::min<Index>(lo, Model::stencil[s][d]);
    return lo;
  }
  static constexpr Index highest_offset(int d) {
    Index hi = 0;
    for (int s = 0; s < kPoints; ++s) hi = std::max<Index>(hi, Model::stencil[s][d]);
    return hi;
  }

  // f = the cell updates of the slabs [first, end) (D = 1: of the cells [first, end)), read from
  // y.
  void rhs(const double* y, const double* theta, double* f, Index first, Index end) const {
    if (options_.check_reads)
      rhs_cells<true>(y, theta, f, first, end);
    else
      rhs_cells<false>(y, theta, f, first, end);
  }

  // out = (∂f/∂y) w on the slabs [first, end) (D = 1: the cells [first, end)).
  void jvp(const double* y, const double* theta, const double* w, double* out, Index first,
           Index end) const {
    if (options_.check_reads)
      jvp_cells<true>(y, theta, w, out, first, end);
    else
      jvp_cells<false>(y, theta, w, out, first, end);
  }

  // out = (∂f/∂y)ᵀ v over the stored cells (zeroed first) from the cells of the slabs visited,
  // and their parameter parts Σ_k v_k ∂f_k/∂θ summed into `partials`. slots == nullptr: every
  // slab is visited and the partials are per block (D = 1: partials[b·kSumWidth + j]) or per
  // slab (D ≥ 2: partials[i·kSumWidth + j]). Otherwise slots[i] says for global slab i (D = 1:
  // for block i) kSlabSkipped, not visited; kSlabUnsummed, visited with its parameter part
  // dropped; or the slot its partial goes to. Every stored entry receives its contributions in the
  // one order of the whole grid's scatter (colour, then slab): visiting a subset of slabs leaves
  // the entries the skipped slabs do not touch with the whole grid's bits. On a 1-D grid an
  // unsummed block is visited only in the cells that reach a summed neighbour block, rounded out
  // to whole chunks (StencilGrid::chunk_floor/chunk_ceil), so the window need not hold its other
  // cells.
  void vjp(const double* y, const double* theta, const double* v, double* out, double* partials,
           const Index* slots) const {
    if (options_.check_reads)
      vjp_colours<true, false>(y, theta, nullptr, v, out, partials, slots);
    else
      vjp_colours<false, false>(y, theta, nullptr, v, out, partials, slots);
  }

  // out = ∇_y [vᵀ (∂f/∂y) u] and its parameter part ∇_θ [vᵀ (∂f/∂y) u] into `partials`: the
  // second derivatives of the Rosenbrock adjoints. The same scatter as vjp (the same slabs, slots,
  // partial layout and order of contributions), each cell evaluated once with a nested
  // forward-mode scalar — its neighbourhood and θ seeded with unit vectors over one directional
  // component seeded with u — so that the outer derivative of the inner one is the cell's part,
  // Σ_k v_k ∂/∂x [(∂f_k/∂x) u]. In the vjp's vectorised runs of cells, as the vjp.
  void jvp_vjp(const double* y, const double* theta, const double* u, const double* v, double* out,
               double* partials, const Index* slots) const {
    if (options_.check_reads)
      vjp_colours<true, true>(y, theta, u, v, out, partials, slots);
    else
      vjp_colours<false, true>(y, theta, u, v, out, partials, slots);
  }

  // The Jacobian ∂f/∂y's pattern, per cell (the whole grid: no window of stored slabs): the
  // distinct cells c's stencil reads, walls left out, counted and summed in cell order —
  // starts[c] … starts[c + 1]) are cell c's, starts[cells] is the total. Row (k, c) of the
  // pattern has F·(starts[c + 1] − starts[c]) columns, so the pattern has F²·starts[cells].
  std::vector<Index> jacobian_cell_starts() const {
    std::vector<Index> starts;
    starts.reserve(static_cast<std::size_t>(grid_.cells() + 1));
    starts.push_back(0);
    for (Index b = 0; b < grid_.blocks(); ++b)
      grid_.for_each_cell(b, [&](const Cell&, Index, const std::array<Index, kPoints>& nb) {
        std::array<Index, kPoints> cells;
        std::array<int, kPoints> position;
        starts.push_back(starts.back() + distinct_reads(nb, cells, position));
      });
    return starts;
  }

  // The distinct cells a neighbourhood nb reads, ascending, walls left out, in
  // cells[0 … count); position[s] is where point s's cell is in that list (−1: the wall).
  // Returns count.
  static int distinct_reads(const std::array<Index, kPoints>& nb, std::array<Index, kPoints>& cells,
                            std::array<int, kPoints>& position) {
    cells = nb;
    std::sort(cells.begin(), cells.end());
    auto end = std::unique(cells.begin(), cells.end());
    auto begin = cells.begin();
    if (*begin == kStencilWall) ++begin;  // the wall (−1) sorts first
    const int count = static_cast<int>(end - begin);
    std::copy(begin, end, cells.begin());
    for (int s = 0; s < kPoints; ++s)
      position[s] =
          nb[s] == kStencilWall
              ? -1
              : static_cast<int>(std::lower_bound(cells.begin(), cells.begin() + count, nb[s]) -
                                 cells.begin());
    return count;
  }

  // ∂f/∂y's values in the pattern's order (compressed rows: row (k, c) holds, for each field k'
  // in order, the entries of the distinct cells c reads, ascending) into values, from
  // starts = jacobian_cell_starts(): one forward-mode evaluation per cell, each writing only
  // its own rows, so the bits do not depend on the thread count. Where points of a cell read
  // the same cell, their derivatives are added in stencil order; a wall's take no entry.
  void jacobian_values(const double* y, const double* theta, const Index* starts,
                       double* values) const {
    if (options_.check_reads)
      jacobian_cells<true>(y, theta, starts, values);
    else
      jacobian_cells<false>(y, theta, starts, values);
  }

  // The value field k reads at neighbour index `at` (a stored cell, or the wall).
  double read(const double* y, int k, Index at) const {
    return at == kStencilWall ? wall_[k] : y[k * grid_.stored_cells() + at];
  }

 private:
  // A value no cell update computes: an output still holding it was not written.
  static double unwritten() {
    return std::bit_cast<double>(std::uint64_t{0x7ff8'5e7c'11ed'0badULL});
  }
  static bool is_unwritten(double x) {
    return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(unwritten());
  }

  // Static (it reads only the model's declarations): called before the members exist.
  static std::array<Index, kDimension> checked_sizes(const std::array<Index, kDimension>& sizes) {
    require_valid_names(kName, "field_names", Model::field_names);
    require_valid_names(kName, "parameter_names", Model::parameter_names);
    if (kFields < 1)
      fail<InvalidArgument>(kName,
                            ": the model declares no fields (field_names is "
                            "empty); a cell needs at least one");
    if (kPoints < 1)
      fail<InvalidArgument>(kName,
                            ": the model's stencil is empty; declare at least "
                            "one offset (e.g. {0, …, 0} for the cell itself)");
    for (int s = 0; s < kPoints; ++s)
      for (int r = 0; r < s; ++r)
        if (Model::stencil[s].delta == Model::stencil[r].delta)
          fail<InvalidArgument>(kName, ": stencil[", s, "] = ", offset_text(Model::stencil[s]),
                                " repeats stencil[", r, "]; the offsets must be distinct");
    Index cells = 1;
    for (int d = 0; d < kDimension; ++d) {
      const Index lo = lowest_offset(d), hi = highest_offset(d);
      if (sizes[d] < hi - lo + 1)
        fail<InvalidArgument>(kName, ": grid size n_", d, " = ", sizes[d],
                              " must be >= ", hi - lo + 1, " (the stencil spans offsets ", lo,
                              " … ", hi, " in dimension ", d, ", ",
                              boundary_name(Model::boundaries[d]),
                              " boundary; a cell's neighbours must be distinct cells)");
      if (cells > (Index{1} << 40) / sizes[d])
        fail<InvalidArgument>(kName, ": the grid has more than 2^40 cells");
      cells *= sizes[d];
    }
    return sizes;
  }

  static std::string offset_text(const Offset<kDimension>& o) {
    std::string s = "{";
    for (int d = 0; d < kDimension; ++d) s += (d > 0 ? ", " : "") + std::to_string(o[d]);
    return s + "}";
  }

  // Threads for a loop over every cell: one in checked mode (its refusal is an exception, which
  // must not leave a parallel region).
  int threads() const {
    if (options_.check_reads) return 1;
    return threads_for(kFields * grid_.cells(), kParallelMinElements);
  }

  // On the threads, loops whose cells write only themselves: visit_slab(i) for each slab i of
  // [first, end) (D ≥ 2), or visit_cells(b, begin, stop) for the cells [begin, stop) of each
  // block b that [first, end) meets (D = 1: the slabs are cells).
  template <class SlabVisit, class CellsVisit>
  void each_slab(Index first, Index end, SlabVisit&& visit_slab, CellsVisit&& visit_cells) const {
    if constexpr (kDimension == 1)
      parallel_indices(grid_.blocks(), threads(), [&](Index b) {
        const Index begin = std::max(first, grid_.block_begin(b));
        const Index stop = std::min(end, grid_.block_begin(b + 1));
        if (begin < stop) visit_cells(b, begin, stop);
      });
    else
      parallel_indices(end - first, threads(), [&](Index i) { visit_slab(first + i); });
  }

  // The plain value of a double or of a (nested) forward-mode scalar.
  template <class T>
  static double plain_value(const T& x) {
    if constexpr (std::is_same_v<T, double>)
      return x;
    else
      return plain_value(x.val());
  }

  template <bool Checked, class T>
  void call_cell(const T* x, const T* p, const Cell& at, T* f) const {
    if constexpr (Checked) {
      for (int k = 0; k < kFields; ++k) f[k] = unwritten();
    }
    model_.cell(Neighbourhood<T, Checked>(x, at), p, at, f);
    if constexpr (Checked) {
      for (int k = 0; k < kFields; ++k) {
        const double value = plain_value(f[k]);
        if (is_unwritten(value))
          fail<InvalidArgument>(kName, ": the cell update left f[", k, "] (field '",
                                Model::field_names[k], "') unwritten; it must write all ", kFields,
                                " outputs");
      }
    }
  }

  template <bool Checked>
  void rhs_cells(const double* y, const double* theta, double* f, Index first, Index end) const {
    const Index cells = grid_.stored_cells();
    auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
      std::array<double, std::size_t{kFields} * kPoints> x;
      std::array<double, kFields> out{};
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s) x[k * kPoints + s] = read(y, k, nb[s]);
      call_cell<Checked>(x.data(), theta, at, out.data());
      for (int k = 0; k < kFields; ++k) f[k * cells + c] = out[k];
    };
    auto run = [&](const Cell& at, Index first_cell, Index lo, Index hi,
                   const std::array<Index, kPoints>& shift) {
      std::array<const double*, std::size_t{kFields} * kPoints> rows;
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s) rows[k * kPoints + s] = y + k * cells + shift[s];
      stencil_rhs_run<kDimension, kFields, kPoints>(model_, rows, f + first_cell, cells, theta, at,
                                                    lo, hi);
    };
    each_slab(
        first, end,
        [&](Index i) {
          if constexpr (kDimension >= 2) {
            if constexpr (Checked)
              grid_.for_each_slab_cell(i, cell);
            else
              grid_.for_each_slab_cell(i, cell, run);
          }
        },
        [&](Index b, Index begin, Index stop) {
          if constexpr (kDimension == 1) {
            if constexpr (Checked)
              grid_.for_each_cell_of(b, begin, stop, cell);
            else
              grid_.for_each_cell_of(b, begin, stop, cell, run);
          }
        });
  }

  template <bool Checked>
  void jvp_cells(const double* y, const double* theta, const double* w, double* out, Index first,
                 Index end) const {
    const Index cells = grid_.stored_cells();
    auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
      std::array<Directional, std::size_t{kFields} * kPoints> x;
      std::array<Directional, std::max(1, kParameters)> p;
      std::array<Directional, kFields> f;
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s) {
          Directional& a = x[k * kPoints + s];
          a.val() = read(y, k, nb[s]);
          a.fastAccessDx(0) = nb[s] == kStencilWall ? 0.0 : w[k * cells + nb[s]];
        }
      for (int j = 0; j < kParameters; ++j) {
        p[j].val() = theta[j];
        p[j].fastAccessDx(0) = 0.0;
      }
      call_cell<Checked>(x.data(), p.data(), at, f.data());
      for (int k = 0; k < kFields; ++k) out[k * cells + c] = f[k].fastAccessDx(0);
    };
    each_slab(
        first, end,
        [&](Index i) {
          if constexpr (kDimension >= 2) grid_.for_each_slab_cell(i, cell);
        },
        [&](Index b, Index begin, Index stop) {
          if constexpr (kDimension == 1) grid_.for_each_cell_of(b, begin, stop, cell);
        });
  }

  template <bool Checked>
  void jacobian_cells(const double* y, const double* theta, const Index* starts,
                      double* values) const {
    const Index field_rows = Index{kFields} * starts[grid_.cells()];  // entries of one field's rows
    auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
      std::array<Derivative, std::size_t{kFields} * kPoints> x;
      std::array<Derivative, std::max(1, kParameters)> p;
      std::array<Derivative, kFields> f;
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s)
          seed_component(x[k * kPoints + s], read(y, k, nb[s]), k * kPoints + s);
      for (int j = 0; j < kParameters; ++j) seed_component(p[j], theta[j], kFields * kPoints + j);
      call_cell<Checked>(x.data(), p.data(), at, f.data());
      std::array<Index, kPoints> cells;
      std::array<int, kPoints> position;
      const int count = distinct_reads(nb, cells, position);
      for (int k = 0; k < kFields; ++k) {
        double* row = values + k * field_rows + Index{kFields} * starts[c];
        std::fill_n(row, kFields * count, 0.0);
        for (int field = 0; field < kFields; ++field)
          for (int s = 0; s < kPoints; ++s)
            if (position[s] >= 0)
              row[field * count + position[s]] += f[k].fastAccessDx(field * kPoints + s);
      }
    };
    each_slab(
        0, grid_.sizes()[0],
        [&](Index i) {
          if constexpr (kDimension >= 2) grid_.for_each_slab_cell(i, cell);
        },
        [&](Index b, Index begin, Index stop) {
          if constexpr (kDimension == 1) grid_.for_each_cell_of(b, begin, stop, cell);
        });
  }

  // One cell's part of the vjp: its weighted local gradient scattered into out, its parameter
  // part added into sums (in this order of the outputs k).
  template <bool Checked>
  void vjp_cell(const Cell& at, Index c, const std::array<Index, kPoints>& nb, const double* y,
                const double* theta, const double* v, double* out, double* sums) const {
    const Index cells = grid_.stored_cells();
    std::array<Derivative, std::size_t{kFields} * kPoints> x;
    std::array<Derivative, std::max(1, kParameters)> p;
    std::array<Derivative, kFields> f;
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s)
        seed_component(x[k * kPoints + s], read(y, k, nb[s]), k * kPoints + s);
    for (int j = 0; j < kParameters; ++j) seed_component(p[j], theta[j], kFields * kPoints + j);
    call_cell<Checked>(x.data(), p.data(), at, f.data());
    std::array<double, kFields> w;
    for (int k = 0; k < kFields; ++k) w[k] = v[k * cells + c];
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s) {
        if (nb[s] == kStencilWall) continue;
        out[k * cells + nb[s]] += weighted_component(f, w, k * kPoints + s);
      }
    for (int j = 0; j < kParameters; ++j)
      sums[j] += weighted_component(f, w, kFields * kPoints + j);
  }

  // One cell's part of jvp_vjp: its weighted second derivatives scattered into out, their
  // parameter part added into sums (in this order of the outputs k).
  template <bool Checked>
  void jvp_vjp_cell(const Cell& at, Index c, const std::array<Index, kPoints>& nb, const double* y,
                    const double* theta, const double* u, const double* v, double* out,
                    double* sums) const {
    const Index cells = grid_.stored_cells();
    std::array<Nested, std::size_t{kFields} * kPoints> x;
    std::array<Nested, std::max(1, kParameters)> p;
    std::array<Nested, kFields> f;
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s) {
        const double along = nb[s] == kStencilWall ? 0.0 : u[k * cells + nb[s]];
        seed_nested(x[k * kPoints + s], read(y, k, nb[s]), along, k * kPoints + s);
      }
    for (int j = 0; j < kParameters; ++j) seed_nested(p[j], theta[j], 0.0, kFields * kPoints + j);
    call_cell<Checked>(x.data(), p.data(), at, f.data());
    std::array<double, kFields> w;
    for (int k = 0; k < kFields; ++k) w[k] = v[k * cells + c];
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s) {
        if (nb[s] == kStencilWall) continue;
        out[k * cells + nb[s]] += weighted_second_component(f, w, k * kPoints + s);
      }
    for (int j = 0; j < kParameters; ++j)
      sums[j] += weighted_second_component(f, w, kFields * kPoints + j);
  }

  // The vjp (Second: jvp_vjp, along u) of the cells of block b (slots == nullptr: all, the
  // block's partial in partials[b]) or of the block's slabs that slots visits, each slab's
  // partial in its slot.
  template <bool Checked, bool Second>
  void vjp_block(Index b, const double* y, const double* theta, const double* u, const double* v,
                 double* out, double* partials, const Index* slots) const {
    const Index cells = grid_.stored_cells();
    double* sums = nullptr;
    auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
      if constexpr (Second)
        jvp_vjp_cell<Checked>(at, c, nb, y, theta, u, v, out, sums);
      else
        vjp_cell<Checked>(at, c, nb, y, theta, v, out, sums);
    };
    constexpr bool kCellByCell = Checked;
    auto run = [&](const Cell& at, Index first_cell, Index lo, Index hi,
                   const std::array<Index, kPoints>& shift) {
      std::array<const double*, std::size_t{kFields} * kPoints> rows, along{};
      std::array<double*, std::size_t{kFields} * kPoints> lines;
      std::array<const double*, kFields> weights;
      for (int k = 0; k < kFields; ++k) {
        for (int s = 0; s < kPoints; ++s) {
          rows[k * kPoints + s] = y + k * cells + shift[s];
          if constexpr (Second) along[k * kPoints + s] = u + k * cells + shift[s];
          lines[k * kPoints + s] = out + k * cells + shift[s] - Model::stencil[s][kDimension - 1];
        }
        weights[k] = v + k * cells + first_cell;
      }
      using Scalar = std::conditional_t<Second, Nested, Derivative>;
      stencil_vjp_run<kDimension, kFields, kPoints, kParameters, Scalar, Second>(
          model_, rows.data(), along.data(), lines.data(), weights.data(), theta, at, lo, hi, sums);
    };
    thread_local std::array<double, kSumWidth> dropped_sums;
    double* dropped = dropped_sums.data();
    auto visit_cells = [&](Index begin, Index end) {
      if constexpr (kDimension == 1) {
        if constexpr (kCellByCell)
          grid_.for_each_cell_of(b, begin, end, cell);
        else
          grid_.for_each_cell_of(b, begin, end, cell, run);
      }
    };
    if constexpr (kDimension == 1) {
      const Index slot = slots ? slots[b] : b;
      if (slot == kSlabSkipped) return;
      sums = slot == kSlabUnsummed ? dropped : partials + slot * kSumWidth;
      std::fill_n(sums, kSumWidth, 0.0);
      const Index begin = grid_.block_begin(b), end = grid_.block_begin(b + 1);
      if (slot != kSlabUnsummed) {
        visit_cells(begin, end);
        return;
      }
      // The cells that reach the summed block below (through negative offsets) and above.
      const Index lower_end = summed_block(slots, b - 1) && lowest_offset(0) < 0
                                  ? grid_.chunk_ceil(b, begin - lowest_offset(0))
                                  : begin;
      const Index upper_begin = summed_block(slots, b + 1) && highest_offset(0) > 0
                                    ? grid_.chunk_floor(b, end - highest_offset(0))
                                    : end;
      if (lower_end >= upper_begin) {
        visit_cells(begin, end);
      } else {
        visit_cells(begin, lower_end);
        visit_cells(upper_begin, end);
      }
    } else {
      for (Index i = grid_.block_begin(b); i < grid_.block_begin(b + 1); ++i) {
        const Index slot = slots ? slots[i] : i;
        if (slot == kSlabSkipped) continue;
        sums = slot == kSlabUnsummed ? dropped : partials + slot * kSumWidth;
        std::fill_n(sums, kSumWidth, 0.0);
        if constexpr (kCellByCell)
          grid_.for_each_slab_cell(i, cell);
        else
          grid_.for_each_slab_cell(i, cell, run);
      }
    }
  }

  // Whether block b (around a periodic grid; none beyond a wall) has its partial summed here.
  bool summed_block(const Index* slots, Index b) const {
    const Index blocks = grid_.blocks();
    if (b < 0 || b >= blocks) {
      if (Model::boundaries[0] != Boundary::periodic) return false;
      b = (b + blocks) % blocks;
    }
    return slots[b] >= 0;
  }

  template <bool Checked, bool Second>
  void vjp_colours(const double* y, const double* theta, const double* u, const double* v,
                   double* out, double* partials, const Index* slots) const {
    std::fill_n(out, kFields * grid_.stored_cells(), 0.0);
    const Index blocks = grid_.blocks();
    for (int colour = 0; colour < grid_.colours(); ++colour) {
      // The blocks of this colour: colour, colour + 2, … (colour 2: the last block alone).
      const Index first = colour == 2 ? blocks - 1 : colour;
      const Index step = 2;
      Index count = colour == 2 ? 1 : (blocks - first + step - 1) / step;
      if (grid_.colours() == 3 && colour == 0) count -= 1;  // the last block is colour 2
      parallel_indices(count, threads(), [&](Index i) {
        vjp_block<Checked, Second>(first + i * step, y, theta, u, v, out, partials, slots);
      });
    }
  }

  Model model_;
  Grid grid_;
  StencilOptions options_;
  std::array<double, kFields> wall_{};
};

}  // namespace rwd::detail
