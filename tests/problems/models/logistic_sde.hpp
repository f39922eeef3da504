// A stochastic templated model (rewind/model.hpp with a diffusion): logistic growth with
// multiplicative noise, dN = r N (1 − N/K) dt + s N dW, N(0) = N0 — the noise depends on the
// state, so Milstein's correction and the diffusion's vjp in y are not trivial. Built as a plugin
// (logistic_sde_plugin.cpp) and used through rwd::auto_problem by the tests that compare the two.
#pragma once

#include <array>

#include "rewind/types.hpp"

struct LogisticSde {
  static constexpr std::array<const char*, 1> state_names{"N"};
  static constexpr std::array<const char*, 4> parameter_names{"r", "K", "s", "N0"};
  static constexpr std::array<double, 4> default_parameters{0.8, 100.0, 0.2, 5.0};
  static constexpr double default_dt = 0.01;
  static constexpr rwd::Index default_steps = 500;
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    f[0] = p[0] * y[0] * (1.0 - y[0] / p[1]);
  }
  template <class T>
  void diffusion(double /*t*/, const T* y, const T* p, T* g) const {
    g[0] = p[2] * y[0];
  }
  template <class T>
  void initial_state(const T* p, T* y0) const {
    y0[0] = p[3];
  }
};
