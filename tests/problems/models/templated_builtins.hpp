// Built-in problems written again as templated models (rewind/model.hpp), with the same
// expressions in the same order as their hand-written classes in src/problems/, so that their rhs
// gives the built-ins' bits and rwd::auto_problem's derived vjps can be compared with the
// built-ins' hand-written ones (rwd::check_derivatives of the pair,
// tests/problems/every_builtin_derived_test.cpp) and their runs timed against each other
// (bench/ad_choice). A model with a hand-written vjp of its own (Lorenz63WithOwnVjp) shows what
// rwd::auto_problem does with one. The built-ins whose size is chosen at run time (LinearOde,
// OrnsteinUhlenbeck) are templates on their size here: a templated model's sizes are its name
// arrays', fixed at compile time.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>

namespace rwd::test_models {

namespace detail {

// A table of Count names of at most Length − 1 characters, and pointers to them: the
// std::array<const char*, N> a templated model declares, for names made at compile time.
template <std::size_t Count, std::size_t Length>
using NameTable = std::array<std::array<char, Length>, Count>;

template <std::size_t Count, std::size_t Length>
constexpr std::array<const char*, Count> name_pointers(const NameTable<Count, Length>& table) {
  std::array<const char*, Count> pointers{};
  for (std::size_t i = 0; i < Count; ++i) pointers[i] = table[i].data();
  return pointers;
}

// "y0", "y1", …: the states of a model of N ≤ 10 components.
template <int N>
constexpr NameTable<N, 3> component_name_table() {
  static_assert(N >= 1 && N <= 10, "component names are y0 ... y9");
  NameTable<N, 3> table{};
  for (int i = 0; i < N; ++i)
    table[static_cast<std::size_t>(i)] = {'y', static_cast<char>('0' + i), '\0'};
  return table;
}
template <int N>
inline constexpr NameTable<N, 3> kComponentNames = component_name_table<N>();

// "A[i][j]" in row-major order, rwd::LinearOde's parameter names, for N ≤ 10.
template <int N>
constexpr NameTable<std::size_t{N} * N, 8> matrix_entry_name_table() {
  static_assert(N >= 1 && N <= 10, "matrix entry names are A[0][0] ... A[9][9]");
  NameTable<std::size_t{N} * N, 8> table{};
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      table[static_cast<std::size_t>(i * N + j)] = {
          'A', '[', static_cast<char>('0' + i), ']', '[', static_cast<char>('0' + j), ']', '\0'};
  return table;
}
template <int N>
inline constexpr NameTable<std::size_t{N} * N, 8> kMatrixEntryNames = matrix_entry_name_table<N>();

}  // namespace detail

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

// rwd::Robertson(): the three species alone (the form the command line runs).
struct RobertsonWithoutIntegral {
  static constexpr std::array<const char*, 3> state_names{"y1", "y2", "y3"};
  static constexpr std::array<const char*, 3> parameter_names{"p1", "p2", "p3"};
  static constexpr std::array<double, 3> default_parameters{0.04, 1.0e4, 3.0e7};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
    f[2] = p[2] * y[1] * y[1];
    f[1] = -f[0] - f[2];
  }
};

// rwd::LinearOde<>(N): y' = A y, θ = the N² entries of A row-major, each f_i summed from 0 over
// j in order as the built-in does.
template <int N>
struct LinearOde {
  static constexpr std::array<const char*, N> state_names =
      detail::name_pointers(detail::kComponentNames<N>);
  static constexpr std::array<const char*, std::size_t{N}* N> parameter_names =
      detail::name_pointers(detail::kMatrixEntryNames<N>);
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < N; ++i) {
      T s = 0.0;
      for (int j = 0; j < N; ++j) s += p[i * N + j] * y[j];
      f[i] = s;
    }
  }
};

// rwd::VanDerPol: x' = w, w' = μ (1 − x²) w − x; θ = (μ).
struct VanDerPol {
  static constexpr std::array<const char*, 2> state_names{"x", "v"};
  static constexpr std::array<const char*, 1> parameter_names{"mu"};
  static constexpr std::array<double, 1> default_parameters{1.0};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T mu = p[0], x = y[0], w = y[1];
    f[0] = w;
    f[1] = mu * (1.0 - x * x) * w - x;
  }
};

// rwd::OrnsteinUhlenbeck<>(N): dy_i = κ (μ − y_i) dt + σ dW_i; θ = (κ, μ, σ).
template <int N>
struct OrnsteinUhlenbeck {
  static constexpr std::array<const char*, N> state_names =
      detail::name_pointers(detail::kComponentNames<N>);
  static constexpr std::array<const char*, 3> parameter_names{"kappa", "mu", "sigma"};
  static constexpr std::array<double, 3> default_parameters{2.0, 1.0, 0.5};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < N; ++i) f[i] = p[0] * (p[1] - y[i]);
  }
  template <class T>
  void diffusion(double /*t*/, const T* /*y*/, const T* p, T* g) const {
    for (int i = 0; i < N; ++i) g[i] = p[2];
  }
};

// rwd::StochasticLorenz63: Lorenz-63's drift, multiplicative noise g_i = s y_i; θ = (σ, ρ, β, s).
struct StochasticLorenz63 {
  static constexpr std::array<const char*, 3> state_names{"x", "y", "z"};
  static constexpr std::array<const char*, 4> parameter_names{"sigma", "rho", "beta", "s"};
  static constexpr std::array<double, 4> default_parameters{10.0, 28.0, 8.0 / 3.0, 0.2};
  template <class T>
  void rhs(double t, const T* y, const T* p, T* f) const {
    Lorenz63{}.rhs(t, y, p, f);  // reads σ, ρ, β only
  }
  template <class T>
  void diffusion(double /*t*/, const T* y, const T* p, T* g) const {
    for (int i = 0; i < 3; ++i) g[i] = p[3] * y[i];
  }
};

// rwd::Projectile: x' = u, z' = w, u' = −k |v| u, w' = −g − k |v| w; θ = (g, k). At rest
// (u = w = 0) |v| = √(u² + w²) has no derivative, but |v| u and |v| w have zero derivative; the
// built-in's vjp writes those zeros, and the branch below gives the derived vjp the same: |v| is
// the constant 0 there (the derivative of the branch taken), and the same value as the
// built-in's √0 everywhere.
struct Projectile {
  static constexpr std::array<const char*, 4> state_names{"x", "z", "u", "w"};
  static constexpr std::array<const char*, 2> parameter_names{"g", "k"};
  static constexpr std::array<double, 2> default_parameters{9.81, 0.002};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    using std::sqrt;
    const T g = p[0], k = p[1], u = y[2], w = y[3];
    const T squared_speed = u * u + w * w;
    T speed = 0.0;
    if (squared_speed > 0.0) speed = sqrt(squared_speed);
    f[0] = u;
    f[1] = w;
    f[2] = -k * speed * u;
    f[3] = -g - k * speed * w;
  }
};

// rwd::CubicSpiral: y0' = a00 y0³ + a10 y1³, y1' = a01 y0³ + a11 y1³; θ = (a00, a01, a10, a11).
struct CubicSpiral {
  static constexpr std::array<const char*, 2> state_names{"y0", "y1"};
  static constexpr std::array<const char*, 4> parameter_names{"a00", "a01", "a10", "a11"};
  static constexpr std::array<double, 4> default_parameters{-0.1, 2.0, -2.0, -0.1};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T c0 = y[0] * y[0] * y[0], c1 = y[1] * y[1] * y[1];
    f[0] = p[0] * c0 + p[2] * c1;
    f[1] = p[1] * c0 + p[3] * c1;
  }
};

}  // namespace rwd::test_models
