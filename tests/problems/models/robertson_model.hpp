// Robertson's stiff kinetics as a templated model (rewind/model.hpp) that declares itself
// autonomous: built as a plugin (robertson_plugin.cpp, rewind_add_model), so that the Rosenbrock
// methods run a user's model loaded by path, with rwd::auto_problem's second derivatives.
// The rates k1, k2, k3 are those of rwd::Robertson (0.04, 10⁴, 3·10⁷: the cvsRoberts setting).
#pragma once

#include <array>

#include "rewind/types.hpp"

struct RobertsonModel {
  static constexpr std::array<const char*, 3> state_names{"y1", "y2", "y3"};
  static constexpr std::array<const char*, 3> parameter_names{"k1", "k2", "k3"};
  static constexpr std::array<double, 3> default_parameters{0.04, 1e4, 3e7};
  static constexpr bool autonomous = true;
  static constexpr double default_dt = 0.4;
  static constexpr rwd::Index default_steps = 100;
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T slow = p[0] * y[0];
    const T back = p[1] * y[1] * y[2];
    const T fast = p[2] * y[1] * y[1];
    f[0] = back - slow;
    f[1] = slow - back - fast;
    f[2] = fast;
  }
  template <class T>
  void initial_state(const T* p, T* y0) const {
    y0[0] = 1.0 + 0.0 * p[0];
    y0[1] = 0.0 * p[0];
    y0[2] = 0.0 * p[0];
  }
};
