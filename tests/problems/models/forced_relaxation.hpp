// A stiff model whose f depends on t, written with t as its scalar type so that ∂f/∂t is derived
// (rwd::AutoProblem::time_derivative): the Rosenbrock methods' time-derivative term, in C++
// (tests/adjoint/rosenbrock_time_test.cpp) and as a plugin (forced_relaxation_plugin.cpp).
//
// A forced relaxation (Prothero–Robinson: x = sin(ωt) exactly when x(0) = 0) driving a slow
// species through a time-dependent coupling:
//   x' = λ (x − sin ωt) + ω cos ωt,   z' = −k z + x² sin ωt.
// f depends on t in both components, on θ = (λ, ω, k) in the forcing as well.
#pragma once

#include <array>
#include <cmath>

#include "rewind/types.hpp"

namespace rwd::testing {

struct ForcedRelaxation {
  static constexpr std::array<const char*, 2> state_names{"x", "z"};
  static constexpr std::array<const char*, 3> parameter_names{"lambda", "omega", "k"};
  static constexpr std::array<double, 3> default_parameters{-200.0, 3.0, 0.8};
  static constexpr double default_dt = 0.02;
  static constexpr Index default_steps = 60;

  template <class T>
  void rhs(T t, const T* y, const T* p, T* f) const {
    using std::cos;
    using std::sin;
    const T phase = p[1] * t;
    const T forcing = sin(phase);
    f[0] = p[0] * (y[0] - forcing) + p[1] * cos(phase);
    f[1] = -p[2] * y[1] + y[0] * y[0] * forcing;
  }

  // x(0) = 0 (on the exact solution sin ωt), z(0) = 1.
  template <class T>
  void initial_state(const T* /*p*/, T* y0) const {
    y0[0] = 0.0;
    y0[1] = 1.0;
  }
};

}  // namespace rwd::testing
