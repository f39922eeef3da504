// rewind/problems/detail/stencil_runs.hpp — the loops of a stencil problem over a run of cells
// (cells of one line whose neighbourhood stays inside the grid): the rhs, and the vjp's two
// passes per chunk — the cells' weighted local gradients, vectorised across cells, then their
// addition into out_y line by line. Not public API: include rewind/stencil_model.hpp, whose top
// comment says what they compute and why in this order.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "rewind/problems/detail/stencil_grid.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

// REWIND_STENCIL_FLATTEN: everything a function calls is inlined into it, the user's cell update
// included — which GCC otherwise leaves as a call once the derivative type is large (measured:
// Gray–Scott's vjp 5× slower), and then nothing vectorises across cells. REWIND_STENCIL_INLINE:
// one function inlined into its caller, so that it is compiled for the caller's SIMD clone.
// (GCC and Clang; empty elsewhere, where the same code runs unvectorised.)
#if defined(__GNUC__)
#define REWIND_STENCIL_FLATTEN __attribute__((flatten))
#define REWIND_STENCIL_INLINE __attribute__((always_inline))
#else
#define REWIND_STENCIL_FLATTEN
#define REWIND_STENCIL_INLINE
#endif

namespace rwd::detail {

// The rhs of the cells [lo, hi) of a run: field k of cell j into f[k·field_stride + j] (f never
// overlaps the state rows: __restrict). rows[c][j]: the value point c % S of field c / S reads
// for cell j, the pointers passed by value (through a pointer to an array GCC reloaded them for
// every cell and did not vectorise). Compiled for AVX2 too (REWIND_SIMD_CLONES: no contraction,
// the same bits): a kernel without branches vectorises across cells, as the built-in problems'
// row loops do.
template <int D, int F, int S, class Model>
REWIND_STENCIL_FLATTEN REWIND_SIMD_CLONES void stencil_rhs_run(
    const Model& model, std::array<const double*, std::size_t{F} * S> rows, double* __restrict f,
    Index field_stride, const double* theta, GridCell<D> at, Index lo, Index hi) {
  for (Index j = lo; j < hi; ++j) {
    at.index[D - 1] = j;
    std::array<double, std::size_t{F} * S> x;
#pragma GCC unroll 64
    for (int c = 0; c < F * S; ++c) x[c] = rows[c][j];
    std::array<double, F> out{};
    model.cell(StencilNeighbourhood<double, D, F, S, false>(x.data(), at), theta, at, out.data());
#pragma GCC unroll 16
    for (int k = 0; k < F; ++k) f[k * field_stride + j] = out[k];
  }
}

// a = value with derivative components e_j (element by element: see rewind/model.hpp).
template <class Derivative>
inline void seed_component(Derivative& a, double value, int j) {
  a.val() = value;
  for (int i = 0; i < a.size(); ++i) a.fastAccessDx(i) = i == j ? 1.0 : 0.0;
}

// a = value + ε·along (the inner, directional component), seeded with the outer unit vector e_j:
// jvp_vjp's nested forward-mode scalar (element by element, as seed_component).
template <class Nested>
inline void seed_nested(Nested& a, double value, double along, int j) {
  a.val().val() = value;
  a.val().fastAccessDx(0) = along;
  for (int i = 0; i < a.size(); ++i) {
    a.fastAccessDx(i).val() = i == j ? 1.0 : 0.0;
    a.fastAccessDx(i).fastAccessDx(0) = 0.0;
  }
}

// Σ_k w_k ∂/∂(component j) [∂f_k along the inner direction], k in order: jvp_vjp's part of
// component j.
template <class Nested, std::size_t F>
inline double weighted_second_component(const std::array<Nested, F>& f,
                                        const std::array<double, F>& w, int j) {
  double s = 0.0;
  for (std::size_t k = 0; k < F; ++k) s += w[k] * f[k].fastAccessDx(j).fastAccessDx(0);
  return s;
}

// Σ_k w_k ∂f_k/∂(component j), k in order.
template <class Derivative, std::size_t F>
inline double weighted_component(const std::array<Derivative, F>& f, const std::array<double, F>& w,
                                 int j) {
  double s = 0.0;
  for (std::size_t k = 0; k < F; ++k) s += w[k] * f[k].fastAccessDx(j);
  return s;
}

// One chunk's local gradients: row c (c < F·S + P) holds, for each cell of the chunk, the
// weighted derivative Σ_k w_k ∂f_k/∂(component c). Per thread, allocated once.
template <int Rows>
inline double* stencil_chunk_buffer() {
  thread_local std::vector<double> buffer(static_cast<std::size_t>(Rows) * kStencilChunk);
  return buffer.data();
}

// Pass 1 of a chunk: every cell's weighted local gradient into g (row c at g + c·kStencilChunk),
// with nothing written anywhere else, so the loop has no dependence from cell to cell and
// vectorises across cells (rows and weights by value, as in stencil_rhs_run; the seeds are
// constants once the loops over components are unrolled). Second (jvp_vjp): Derivative is the
// nested scalar, along[c][j] the inner direction u at the value rows[c][j], and g the weighted
// second derivatives Σ_k w_k ∂/∂x_c [(∂f_k/∂x) u].
template <int D, int F, int S, int P, class Derivative, bool Second, class Model>
REWIND_STENCIL_FLATTEN REWIND_SIMD_CLONES_AVX512 void stencil_vjp_gradients(
    const Model& model, std::array<const double*, std::size_t{F} * S> rows,
    [[maybe_unused]] std::array<const double*, std::size_t{F} * S> along,
    std::array<const double*, F> weights, const double* theta, GridCell<D> at, Index lo, Index hi,
    double* __restrict g) {
  std::array<Derivative, std::max(1, P)> p;
  for (int q = 0; q < P; ++q) {
    if constexpr (Second)
      seed_nested(p[q], theta[q], 0.0, F * S + q);
    else
      seed_component(p[q], theta[q], F * S + q);
  }
  for (Index j = lo; j < hi; ++j) {
    at.index[D - 1] = j;
    std::array<Derivative, std::size_t{F} * S> x;
    std::array<Derivative, F> f;
#pragma GCC unroll 64
    for (int c = 0; c < F * S; ++c) {
      if constexpr (Second)
        seed_nested(x[c], rows[c][j], along[c][j], c);
      else
        seed_component(x[c], rows[c][j], c);
    }
    model.cell(StencilNeighbourhood<Derivative, D, F, S, false>(x.data(), at), p.data(), at,
               f.data());
    std::array<double, F> w;
#pragma GCC unroll 16
    for (int k = 0; k < F; ++k) w[k] = weights[k][j];
#pragma GCC unroll 64
    for (int c = 0; c < F * S + P; ++c) {
      if constexpr (Second)
        g[c * kStencilChunk + (j - lo)] = weighted_second_component(f, w, c);
      else
        g[c * kStencilChunk + (j - lo)] = weighted_component(f, w, c);
    }
  }
}

// The stencil's points grouped by their offsets in the leading dimensions: the points of one
// group read cells of one line (the same line as the cell, shifted), in stencil order.
template <std::size_t S>
struct StencilLineGroups {
  int count = 0;
  std::array<int, S> size{};
  std::array<std::array<int, S>, S> points{};
};

template <int D, std::size_t S>
constexpr StencilLineGroups<S> stencil_line_groups(const std::array<Offset<D>, S>& stencil) {
  StencilLineGroups<S> groups;
  for (std::size_t s = 0; s < S; ++s) {
    int found = -1;
    for (int i = 0; i < groups.count && found < 0; ++i) {
      bool same = true;
      for (int d = 0; d + 1 < D; ++d)
        same = same && stencil[static_cast<std::size_t>(groups.points[i][0])][d] == stencil[s][d];
      if (same) found = i;
    }
    if (found < 0) found = groups.count++;
    groups.points[found][groups.size[found]++] = static_cast<int>(s);
  }
  return groups;
}

// Pass 2 for one group of points and one field: element e of the line (line[e]; e along the last
// dimension) receives, in the group's order, the gradient of every chunk cell j = e − offset
// that reads it through one of the group's points — one load and one store of out_y per element.
template <class Model, int G, int D, int F, int S>
REWIND_STENCIL_INLINE inline void add_line_group(double* __restrict line,
                                                 const double* __restrict g, int field, Index begin,
                                                 Index length) {
  constexpr StencilLineGroups<S> groups = stencil_line_groups<D>(Model::stencil);
  constexpr int members = groups.size[G];
  constexpr std::array<int, S> points = groups.points[G];
  constexpr std::array<Index, S> offsets = [] {
    constexpr StencilLineGroups<S> all = stencil_line_groups<D>(Model::stencil);
    std::array<Index, S> o{};
    for (int i = 0; i < all.size[G]; ++i) o[i] = Model::stencil[all.points[G][i]][D - 1];
    return o;
  }();
  constexpr Index low = *std::min_element(offsets.begin(), offsets.begin() + members);
  constexpr Index high = *std::max_element(offsets.begin(), offsets.begin() + members);
  // rows[i][e − offsets[i] − begin]: the gradient that element e receives through member i
  // (for that index in [0, length)).
  std::array<const double*, S> rows{};
#pragma GCC unroll 32
  for (int i = 0; i < members; ++i) rows[i] = g + (field * S + points[i]) * kStencilChunk;
  const Index first = begin + low, last = begin + length + high;
  const Index body_begin = begin + high, body_end = std::max(body_begin, begin + length + low);
  for (Index e = first; e < last; ++e) {
    if (e == body_begin && body_begin < body_end) {
      for (; e < body_end; ++e) {  // every member contributes: no test, vectorised
        double t = line[e];
#pragma GCC unroll 32
        for (int i = 0; i < members; ++i) t += rows[i][e - offsets[i] - begin];
        line[e] = t;
      }
      if (e == last) break;
    }
    double t = line[e];
#pragma GCC unroll 32
    for (int i = 0; i < members; ++i) {
      const Index at = e - offsets[i] - begin;
      if (at >= 0 && at < length) t += rows[i][at];
    }
    line[e] = t;
  }
}

// The vjp of the cells [lo, hi) of a run, chunk by chunk: pass 1 (above), then pass 2 adds the
// chunk's gradients into out_y line by line (add_line_group: for each field, each group of
// points that read one line) and the parameter rows into sums in four lanes. rows[c][j]: the
// value point c of field ⌊c/S⌋ reads for cell j; lines[c]: the start of the line (in out_y) that
// point c of field ⌊c/S⌋ reads; weights[k][j]: v at cell j, field k. Second (jvp_vjp, Derivative
// the nested scalar): along[c][j] is u where rows[c][j] is y, and the gradients are the weighted
// second derivatives (stencil_vjp_gradients); otherwise along is not read.
template <int D, int F, int S, int P, class Derivative, bool Second, class Model>
REWIND_SIMD_CLONES_AVX512 void stencil_vjp_run(const Model& model, const double* const* rows,
                                               const double* const* along, double* const* lines,
                                               const double* const* weights, const double* theta,
                                               const GridCell<D>& at, Index lo, Index hi,
                                               double* sums) {
  constexpr StencilLineGroups<S> groups = stencil_line_groups<D>(Model::stencil);
  double* g = stencil_chunk_buffer<F * S + std::max(1, P)>();
  for (Index begin = lo; begin < hi; begin += kStencilChunk) {
    const Index end = std::min(hi, begin + kStencilChunk), length = end - begin;
    std::array<const double*, std::size_t{F} * S> row_pointers, along_pointers{};
    std::array<const double*, F> weight_pointers;
    for (int c = 0; c < F * S; ++c) row_pointers[c] = rows[c];
    if constexpr (Second)
      for (int c = 0; c < F * S; ++c) along_pointers[c] = along[c];
    for (int k = 0; k < F; ++k) weight_pointers[k] = weights[k];
    stencil_vjp_gradients<D, F, S, P, Derivative, Second>(
        model, row_pointers, along_pointers, weight_pointers, theta, at, begin, end, g);
    for (int k = 0; k < F; ++k)
      [&]<std::size_t... G>(std::index_sequence<G...>) REWIND_STENCIL_INLINE {
        (add_line_group<Model, static_cast<int>(G), D, F, S>(lines[k * S + groups.points[G][0]], g,
                                                             k, begin, length),
         ...);
      }
    (std::make_index_sequence<static_cast<std::size_t>(groups.count)>{});
    // Four interleaved partial sums per chunk: one chain of dependent additions per cell would
    // bound the whole vjp.
    for (int q = 0; q < P; ++q) {
      // Element i into lane i mod 4 (four doubles of GCC's vector extension, element-wise IEEE
      // additions: written as a loop over four scalars GCC vectorised it with shuffles).
      typedef double Four __attribute__((vector_size(32)));
      const double* row = g + (F * S + q) * kStencilChunk;
      Four lanes = {0.0, 0.0, 0.0, 0.0};
      Index i = 0;
      for (; i + 4 <= length; i += 4) {
        Four x;
        std::memcpy(&x, row + i, sizeof(Four));
        lanes += x;
      }
      double lane[4] = {lanes[0], lanes[1], lanes[2], lanes[3]};
      for (int k = 0; i < length; ++i, ++k) lane[k] += row[i];
      sums[q] += (lane[0] + lane[1]) + (lane[2] + lane[3]);
    }
  }
}

}  // namespace rwd::detail
