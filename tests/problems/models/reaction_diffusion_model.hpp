// A 1-D reaction–diffusion model (Fisher–KPP) as a templated model (rewind/model.hpp) that
// declares the band of its Jacobian and its autonomy: built as a plugin
// (reaction_diffusion_plugin.cpp, rewind_add_model), so that the band solvers — the implicit and
// Rosenbrock engines' band LU and CVODES's band solver — run a user's PDE loaded by path.
//
//   du_i/dt = D (u_{i−1} − 2 u_i + u_{i+1}) / Δx² + r u_i (1 − u_i),   i = 0 … 11,
//
// on [0, 1] with Δx = 1/12 and no flux through the ends (u_{−1} = u_0, u_12 = u_11): ∂f_i/∂y_j ≠ 0
// for j ∈ {i − 1, i, i + 1}, one super- and one sub-diagonal. Diffusion's fastest mode,
// −4 D/Δx² ≈ −576 D, makes it stiff for steps of 0.01.
#pragma once

#include <array>

#include "rewind/model.hpp"
#include "rewind/types.hpp"

struct ReactionDiffusionModel {
  static constexpr int kCells = 12;
  static constexpr double kInverseSpacingSquared = double(kCells) * double(kCells);  // 1/Δx²
  static constexpr std::array<const char*, kCells> state_names{
      "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9", "u10", "u11"};
  static constexpr std::array<const char*, 2> parameter_names{"D", "r"};
  static constexpr std::array<double, 2> default_parameters{1.0, 4.0};
  static constexpr bool autonomous = true;
  static constexpr rwd::JacobianBand jacobian_band{/*upper=*/1, /*lower=*/1};
  static constexpr double default_dt = 0.01;
  static constexpr rwd::Index default_steps = 50;

  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < kCells; ++i) {
      const T& left = i > 0 ? y[i - 1] : y[i];
      const T& right = i + 1 < kCells ? y[i + 1] : y[i];
      f[i] =
          p[0] * (left - 2.0 * y[i] + right) * kInverseSpacingSquared + p[1] * y[i] * (1.0 - y[i]);
    }
  }

  // A front: near 1 on the left, near 0 on the right (its position does not depend on θ).
  template <class T>
  void initial_state(const T* p, T* y0) const {
    for (int i = 0; i < kCells; ++i) {
      const double x = (i + 0.5) / kCells;
      y0[i] = 0.0 * p[0] + (x < 0.3 ? 0.95 : 0.05);
    }
  }
};
