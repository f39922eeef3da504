// Built-in problems written again as templated models (rewind/model.hpp), with the same
// expressions as their hand-written classes in src/problems/, so that rwd::auto_problem's derived
// vjps can be compared with the built-ins' hand-written ones (rwd::check_derivatives of the pair)
// and their runs timed against each other (bench/ad_choice). A model with a hand-written vjp of
// its own (Lorenz63WithOwnVjp) shows what rwd::auto_problem does with one.
#pragma once

#include <array>

namespace rwd::test_models {

// rwd::Lorenz63: σ, ρ, β.
struct Lorenz63 {
  static constexpr std::array<const char*, 3> state_names{"x", "y", "z"};
  static constexpr std::array<const char*, 3> parameter_names{"sigma", "rho", "beta"};
  static constexpr std::array<double, 3> default_parameters{10.0, 28.0, 8.0 / 3.0};
  // The inputs are read into locals before f is written, as the built-in does: f may alias y or
  // p for all the compiler knows, so reading them after a store to f would reload them.
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T sigma = p[0], rho = p[1], beta = p[2], x0 = y[0], x1 = y[1], x2 = y[2];
    f[0] = sigma * (x1 - x0);
    f[1] = x0 * (rho - x2) - x1;
    f[2] = x0 * x1 - beta * x2;
  }
};

// Lorenz-63 with its vjp written by hand, as rwd::Lorenz63's: rwd::auto_problem uses this vjp,
// and rwd::check_derivatives compares it with the derived one.
struct Lorenz63WithOwnVjp : Lorenz63 {
  void vjp(double /*t*/, const double* y, const double* p, const double* v, double* out_y,
           double* out_p) const {
    out_y[0] = -p[0] * v[0] + (p[1] - y[2]) * v[1] + y[1] * v[2];
    out_y[1] = p[0] * v[0] - v[1] + y[0] * v[2];
    out_y[2] = -y[0] * v[1] - p[2] * v[2];
    out_p[0] = (y[1] - y[0]) * v[0];
    out_p[1] = y[0] * v[1];
    out_p[2] = -y[2] * v[2];
  }
};

// rwd::Robertson(/*with_integral=*/true): stiff kinetics with the integral of y_3 as a fourth
// state (f_1 from f_0 and f_2, as the built-in writes it).
struct Robertson {
  static constexpr std::array<const char*, 4> state_names{"y1", "y2", "y3", "integral_y3"};
  static constexpr std::array<const char*, 3> parameter_names{"p1", "p2", "p3"};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
    f[2] = p[2] * y[1] * y[1];
    f[1] = -f[0] - f[2];
    f[3] = y[2];
  }
};

// rwd::LotkaVolterra: prey x, predators p; α, β, δ, γ.
struct LotkaVolterra {
  static constexpr std::array<const char*, 2> state_names{"prey", "predators"};
  static constexpr std::array<const char*, 4> parameter_names{"alpha", "beta", "delta", "gamma"};
  static constexpr std::array<double, 4> default_parameters{1.5, 1.0, 1.0, 3.0};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T alpha = p[0], beta = p[1], delta = p[2], gamma = p[3], x = y[0], predators = y[1];
    f[0] = alpha * x - beta * x * predators;
    f[1] = delta * x * predators - gamma * predators;
  }
};

}  // namespace rwd::test_models
