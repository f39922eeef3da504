// A PDE of your own for the `rewind` tool: the 2-D Brusselator reaction–diffusion system written
// as one cell's update (a stencil model, rewind/stencil_model.hpp) and exported as a plugin
// (rewind/model_plugin.hpp). The vjp, the Jacobian–vector product and the sparse Jacobian are
// derived (Sacado's forward mode, one evaluation per cell): no hand-written transposed stencil.
//
//   # CMakeLists.txt:  find_package(rewind REQUIRED)
//   #                  rewind_add_model(brusselator brusselator_model.cpp)   → build/brusselator.so
//   B=build/brusselator.so
//   rewind run --model $B --n 64 --method esdirk43 --adaptive --linear-solver sparse   # exact
//   rewind run --model $B --n 128 --method esdirk43 --adaptive --linear-solver gmres-ilu
//   rewind run --model $B --n 64 --method bdf --linear-solver sparse     # CVODES with KLU
//
// On the unit square with no-flux walls, n × n cells of side h = 1/n:
//   u' = A + u²v − (B + 1) u + α ∇²u,   v' = B u − u²v + α ∇²v,
// with the five-point Laplacian (neighbour differences over h²). Time and the rates are
// dimensionless; the stiffness grows as α/h² = α n². The initial state is the steady state
// (u, v) = (A, B/A) with a wave on u and v and a bump on u, so dJ/dA and dJ/dB include their
// effect through it.
#include <array>
#include <cmath>

#include "rewind/model_plugin.hpp"

struct Brusselator {
  static constexpr std::array<const char*, 2> field_names{"u", "v"};
  static constexpr std::array<const char*, 3> parameter_names{"A", "B", "alpha"};
  static constexpr std::array<double, 3> default_parameters{1.0, 3.4, 0.002};
  enum Field { u, v };
  enum Point { centre, up, down, left, right };  // indices into `stencil`
  static constexpr std::array<rwd::Offset<2>, 5> stencil{
      {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}};  // (row, column) offsets
  static constexpr std::array<rwd::Boundary, 2> boundaries{rwd::Boundary::reflecting,
                                                           rwd::Boundary::reflecting};
  static constexpr rwd::Index default_grid_size = 32;  // --n's default
  static constexpr double default_dt = 0.01;
  static constexpr long default_steps = 100;  // t = 0 … 1

  template <class T, class X>
  static T laplacian(const X& x, int field) {
    return (((x(field, up) + x(field, down)) + x(field, left)) + x(field, right)) -
           4.0 * x(field, centre);
  }

  template <class T, class X>
  void cell(const X& x, const T* p, const rwd::GridCell<2>& at, T* f) const {
    const T diffusion = p[2] * static_cast<double>(at.size[0] * at.size[1]);  // α / h²
    const T uc = x(u, centre), vc = x(v, centre);
    const T reaction = uc * uc * vc;
    f[u] = p[0] + reaction - (p[1] + 1.0) * uc + diffusion * laplacian<T>(x, u);
    f[v] = p[1] * uc - reaction + diffusion * laplacian<T>(x, v);
  }

  template <class T>
  void initial_cell(const T* p, const rwd::GridCell<2>& at, T* y0) const {
    const double pi = 3.14159265358979323846;
    const double x = (static_cast<double>(at.index[1]) + 0.5) / static_cast<double>(at.size[1]);
    const double z = (static_cast<double>(at.index[0]) + 0.5) / static_cast<double>(at.size[0]);
    const double bump = std::exp(-((x - 0.3) * (x - 0.3) + (z - 0.3) * (z - 0.3)) / 0.01);
    const double wave = std::sin(2.0 * pi * x) * std::cos(pi * z);
    y0[u] = p[0] + 0.1 * wave + 0.5 * bump;
    y0[v] = p[1] / p[0] - 0.1 * wave;
  }
};

REWIND_MODEL(Brusselator)
