// The built-in stencil problems written as stencil models (rewind/stencil_model.hpp): Gray–Scott
// (2-D, two fields, periodic), Heat2D (2-D, one field, cold walls: fixed value 0, a heater that
// varies in space), Lorenz-96 (1-D, periodic) and the Brusselator (2-D, two fields, no-flux
// walls: reflecting), each with the built-in problem's expressions in the built-in's order, so
// that their rhs gives the built-in's bits. Used by tests/problems/stencil_model_test.cpp,
// tests/problems/every_builtin_derived_test.cpp and bench/stencil_models/stencil_models_bench.cpp.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "rewind/problems/heat2d.hpp"
#include "rewind/stencil_model.hpp"

namespace rwd::testing {

// u' = Du ∇²u − uv² + F(1 − u), v' = Dv ∇²v + uv² − (F + k)v (rewind/problems/gray_scott.hpp).
struct GrayScottStencil {
  static constexpr std::array<const char*, 2> field_names{"u", "v"};
  static constexpr std::array<const char*, 4> parameter_names{"Du", "Dv", "F", "k"};
  static constexpr std::array<double, 4> default_parameters{0.16, 0.08, 0.037, 0.06};
  enum Field { u, v };
  enum Point { centre, up, down, left, right };
  static constexpr std::array<Offset<2>, 5> stencil{{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::periodic, Boundary::periodic};

  template <class T, class X>
  static T laplacian(const X& x, int field) {
    return (((x(field, up) + x(field, down)) + x(field, left)) + x(field, right)) -
           4.0 * x(field, centre);
  }
  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<2>& /*at*/, T* f) const {
    const T lap_u = laplacian<T>(x, u), lap_v = laplacian<T>(x, v);
    const T uvv = x(u, centre) * x(v, centre) * x(v, centre);
    f[u] = p[0] * lap_u - uvv + p[2] * (1.0 - x(u, centre));
    f[v] = p[1] * lap_v + uvv - (p[2] + p[3]) * x(v, centre);
  }
};

// u' = κ ∇²u + (s₀ p_r) p_c with u = 0 beyond the walls (rewind/problems/heat2d.hpp): the heater
// profile p is the model's table, read at the cell's position.
struct Heat2DStencil {
  static constexpr std::array<const char*, 1> field_names{"u"};
  static constexpr std::array<const char*, 2> parameter_names{"kappa", "s0"};
  static constexpr std::array<double, 2> default_parameters{0.2, 0.001};
  enum Point { centre, up, down, left, right };
  static constexpr std::array<Offset<2>, 5> stencil{{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::fixed, Boundary::fixed};
  static constexpr std::array<double, 1> wall_values{0.0};

  std::vector<double> profile;  // p_i, one per row (= column) index

  explicit Heat2DStencil(Index n) : profile(detail::heat2d_heater_profile(n)) {}

  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<2>& at, T* f) const {
    const T lap = (((x(0, up) + x(0, down)) + x(0, left)) + x(0, right)) - 4.0 * x(0, centre);
    const T source_row = p[1] * profile[static_cast<std::size_t>(at.index[0])];
    f[0] = p[0] * lap + source_row * profile[static_cast<std::size_t>(at.index[1])];
  }
};

// y_i' = (y_{i+1} − y_{i−2}) y_{i−1} − y_i + F on a ring (rewind/problems/lorenz96.hpp).
struct Lorenz96Stencil {
  static constexpr std::array<const char*, 1> field_names{"y"};
  static constexpr std::array<const char*, 1> parameter_names{"F"};
  static constexpr std::array<double, 1> default_parameters{8.0};
  enum Point { minus2, minus1, centre, plus1 };
  static constexpr std::array<Offset<1>, 4> stencil{{{-2}, {-1}, {0}, {1}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::periodic};

  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<1>& /*at*/, T* f) const {
    f[0] = (x(0, plus1) - x(0, minus2)) * x(0, minus1) - x(0, centre) + p[0];
  }
};

// u' = A + u²v − (B + 1)u + α n² ∇²u, v' = Bu − u²v + α n² ∇²v on an n × n grid with no-flux
// walls, the mirrored ghost cell of rwd::Brusselator2D being a reflecting boundary
// (rewind/problems/brusselator2d.hpp). The Laplacian's scale α/h² = α n² is the grid's cell count
// n_0 n_1, which is n² on the built-in's square grid. One difference is the layout: the built-in
// interleaves the two species per cell (u, v, u, v, …), a stencil problem stores each field whole
// ([u; v]), so their states are the same numbers in another order.
struct BrusselatorStencil {
  static constexpr std::array<const char*, 2> field_names{"u", "v"};
  static constexpr std::array<const char*, 3> parameter_names{"A", "B", "alpha"};
  static constexpr std::array<double, 3> default_parameters{1.0, 3.4, 0.002};
  enum Field { u, v };
  enum Point { centre, up, down, left, right };
  static constexpr std::array<Offset<2>, 5> stencil{{{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::reflecting, Boundary::reflecting};

  template <class T, class X>
  static T laplacian(const X& x, int field) {
    return (((x(field, up) + x(field, down)) + x(field, left)) + x(field, right)) -
           4.0 * x(field, centre);
  }
  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<2>& at, T* f) const {
    const T k = p[2] * static_cast<double>(at.size[0] * at.size[1]);  // α / h²
    const T uc = x(u, centre), vc = x(v, centre);
    const T lap_u = laplacian<T>(x, u), lap_v = laplacian<T>(x, v);
    f[u] = p[0] + uc * uc * vc - (p[1] + 1.0) * uc + k * lap_u;
    f[v] = p[1] * uc - uc * uc * vc + k * lap_v;
  }
};

}  // namespace rwd::testing
