// Stencil models with an initial state (initial_cell), built as plugins by rewind_add_model
// (tests/CMakeLists.txt: gray_scott_stencil_plugin.cpp, brusselator_stencil_plugin.cpp,
// lorenz96_stencil_plugin.cpp) and compared, in tests/problems/stencil_plugin_test.cpp and
// tests/distributed/distributed_plugin_stencil_test.cpp, with the same models made problems in C++.
//
// GrayScottWithStart is tests' GrayScottStencil (the built-in Gray–Scott's expressions, so its rhs
// has the built-in's bits) starting from the built-in's default initial state (seed 0): through
// `rewind run --model` it steps the built-in gray_scott's numbers. BrusselatorWithStart is the
// 2-D Brusselator (no-flux walls) whose initial state depends on its parameters — u = A + 0.1
// sin(2πx) cos(πz) + ½ bump, v = B/A − 0.1 sin(2πx) cos(πz), the built-in brusselator's shape —
// a stiff PDE from a plugin, for the implicit methods' sparse and gmres-ilu solvers through
// --model, and gradients that flow through initial_cell.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "rewind/problems/gray_scott.hpp"
#include "stencil_models.hpp"

namespace rwd::testing {

struct GrayScottWithStart : GrayScottStencil {
  static constexpr double default_dt = 1.0;
  static constexpr Index default_steps = 200;
  static constexpr Index default_grid_size = 64;

  // GrayScott<>::default_initial_state(0) at the cell: u = 1, v = 0 but in the noisy centred
  // square.
  template <class T>
  void initial_cell(const T* /*p*/, const GridCell<2>& at, T* y0) const {
    const Index n = at.size[0];
    const Index half = std::max<Index>(1, n / 10), centre = n / 2;
    const auto u32 = [](Index i) { return static_cast<std::uint32_t>(i); };
    double u = 0.0, v = 0.0;
    detail::gray_scott_initial_cell(0, u32(at.index[0] * n + at.index[1]), u32(n),
                                    u32(centre - half), u32(std::min(n, centre + half)), u, v);
    y0[0] = u;
    y0[1] = v;
  }
};

struct BrusselatorWithStart : BrusselatorStencil {
  static constexpr double default_dt = 0.01;
  static constexpr Index default_steps = 100;
  static constexpr Index default_grid_size = 16;

  template <class T>
  void initial_cell(const T* p, const GridCell<2>& at, T* y0) const {
    using std::cos;
    using std::exp;
    using std::sin;
    const double pi = 3.14159265358979323846;
    const double x = (static_cast<double>(at.index[1]) + 0.5) / static_cast<double>(at.size[1]);
    const double z = (static_cast<double>(at.index[0]) + 0.5) / static_cast<double>(at.size[0]);
    const double bump = exp(-((x - 0.3) * (x - 0.3) + (z - 0.3) * (z - 0.3)) / 0.01);
    const double wave = sin(2.0 * pi * x) * cos(pi * z);
    y0[0] = p[0] + 0.1 * wave + 0.5 * bump;
    y0[1] = p[1] / p[0] - 0.1 * wave;
  }
};

// Lorenz-96 as a 1-D stencil model starting from y = F with cell 0 nudged by 0.01: a plugin whose
// line of cells splits across ranks by equal blocks (n = 20000: four of 5000).
struct Lorenz96WithStart : Lorenz96Stencil {
  static constexpr Index default_grid_size = 40;

  template <class T>
  void initial_cell(const T* p, const GridCell<1>& at, T* y0) const {
    y0[0] = p[0] + (at.index[0] == 0 ? 0.01 : 0.0);
  }
};

}  // namespace rwd::testing
