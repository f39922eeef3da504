// The issue's SIR model as a templated model (rewind/model.hpp), with an initial state that
// depends on the population N = p[2]: built as a plugin (sir_plugin.cpp, rewind_add_model) and
// used directly through rwd::auto_problem by the tests that compare the two and by the tests of
// the derived problem itself; SirFromTenInfected starts from ten infected (the fitting tests).
#pragma once

#include <array>

#include "rewind/types.hpp"

struct Sir {
  static constexpr std::array<const char*, 3> state_names{"S", "I", "R"};
  static constexpr std::array<const char*, 3> parameter_names{"beta", "gamma", "N"};
  static constexpr std::array<double, 3> default_parameters{0.5, 0.25, 1000.0};
  static constexpr double default_dt = 0.1;         // days
  static constexpr rwd::Index default_steps = 400;  // 40 days
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T infection = p[0] * y[0] * y[1] / p[2];
    f[0] = -infection;
    f[1] = infection - p[1] * y[1];
    f[2] = p[1] * y[1];
  }
  template <class T>
  void initial_state(const T* p, T* y0) const {
    y0[0] = 0.99 * p[2];
    y0[1] = 0.01 * p[2];
    y0[2] = 0.0 * p[2];
  }
};

// The same model, started from ten infected in a population N: y0 = (N − 10, 10, 0).
struct SirFromTenInfected : Sir {
  template <class T>
  void initial_state(const T* p, T* y0) const {
    y0[0] = p[2] - 10.0;
    y0[1] = 10.0 + 0.0 * p[2];
    y0[2] = 0.0 * p[2];
  }
};
