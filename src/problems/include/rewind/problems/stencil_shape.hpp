// rewind/problems/stencil_shape.hpp — the vocabulary a stencil model (rewind/stencil_model.hpp)
// declares its shape with: neighbour offsets, boundaries, and the cell an update is for.
//
//   static constexpr std::array<rwd::Offset<2>, 5> stencil{{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0,
//   1}}}; static constexpr std::array<rwd::Boundary, 2> boundaries{rwd::Boundary::periodic,
//                                                             rwd::Boundary::fixed};
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "rewind/types.hpp"

namespace rwd {

// A neighbour's position relative to the cell, one Δindex per dimension (dimension 0 first).
template <int D>
struct Offset {
  std::array<int, D> delta{};
  constexpr Offset() = default;
  template <class... Ints>
  requires(sizeof...(Ints) == D &&
           (std::is_convertible_v<Ints, int> && ...)) constexpr Offset(Ints... d)
      : delta{static_cast<int>(d)...} {}
  constexpr int operator[](int d) const { return delta[static_cast<std::size_t>(d)]; }
};

// What lies beyond the grid along one dimension (see rewind/stencil_model.hpp).
enum class Boundary { periodic, fixed, reflecting };

// Options of a stencil problem.
struct StencilOptions {
  // Check every read x(field, point) against the declared shape and that every output is
  // written, on one thread (a debug aid: several times slower). On by default without NDEBUG.
#ifdef NDEBUG
  bool check_reads = false;
#else
  bool check_reads = true;
#endif
};

// The cell being updated: its index per dimension and the grid's sizes.
template <int D>
struct GridCell {
  std::array<Index, D> index;
  std::array<Index, D> size;
};

}  // namespace rwd
