// rewind/problems/linear.hpp — the linear system y' = A y, the problem with closed-form answers.
//
//   f(t, y, θ) = A y,      A = reshape(θ, n, n) row-major: A_ij = θ[i·n + j]
//
// State of size n ≥ 1, n² parameters (the entries of A). Because y(T) = exp(A T) y(0), every
// gradient has a closed form — dJ/dy(0) = exp(Aᵀ T) ∇J for J = g(y(T)) — so this is the problem
// on which the adjoint machinery is checked against exact answers, and its Jacobians are exact:
// ∂f/∂y = A and ∂f/∂A_ij = y_j e_i.
//
// default_parameters(n) is a damped oscillator chain: A_ii = −0.1, A_{i,i+1} = 1,
// A_{i+1,i} = −1 (a skew-symmetric tridiagonal part plus damping), so every eigenvalue has real
// part −0.1 and solutions decay like e^{−0.1 t} while oscillating; RK4 with dt = 0.01 is accurate.
// The default initial state is y_i = 1/(i + 1).
//
//   rwd::LinearOde<> linear(3);
//   auto theta = linear.default_parameters();      // vec(A), 9 entries
//   auto y = linear.default_initial_state();       // (1, 1/2, 1/3)
//   auto f = rwd::EigenBackend::zeros(3);
//   linear.rhs(0.0, y, theta, f);                  // f = A y
//
// Cost: rhs and the state part of vjp are O(n²) with one device thread per row/column (meant for
// small and moderate n: a dense A of n = 10^4 is already 800 MB); the parameter part writes the
// outer product v yᵀ with one thread per entry.
#pragma once

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// f_i = Σ_j A_ij y_j.
struct LinearRhsKernel {
  const double* a;
  const double* y;
  double* f;
  Index n;

  REWIND_HOST_DEVICE void operator()(Index i) const {
    const double* row = a + i * n;
    double s = 0.0;
    for (Index j = 0; j < n; ++j) s += row[j] * y[j];
    f[i] = s;
  }
};

// (Aᵀ v)_j = Σ_i A_ij v_i.
struct LinearVjpStateKernel {
  const double* a;
  const double* v;
  double* out_y;
  Index n;

  REWIND_HOST_DEVICE void operator()(Index j) const {
    double s = 0.0;
    for (Index i = 0; i < n; ++i) s += a[i * n + j] * v[i];
    out_y[j] = s;
  }
};

// (∂f/∂θ)ᵀ v at θ index i·n + j is v_i y_j.
struct LinearVjpParameterKernel {
  const double* y;
  const double* v;
  double* out_theta;
  Index n;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const Index i = k / n;
    const Index j = k - i * n;
    out_theta[k] = v[i] * y[j];
  }
};

}  // namespace detail

template <class B = EigenBackend>
class LinearOde {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "linear";
  // The largest n whose n² parameters fit in a 64-bit Index.
  static constexpr Index kMaxStateSize = 3037000499;

  // n: the state size, 1 ≤ n ≤ kMaxStateSize; θ then has n² entries.
  explicit LinearOde(Index n) : n_(check_size(n)) {}

  Index state_size() const { return n_; }
  Index parameter_size() const { return n_ * n_; }

  // vec(A) row-major for the damped oscillator chain A_ii = −0.1, A_{i,i+1} = 1, A_{i+1,i} = −1.
  static Vector default_parameters(Index n) {
    check_size(n);
    std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
    for (Index i = 0; i < n; ++i) {
      a[static_cast<std::size_t>(i * n + i)] = -0.1;
      if (i + 1 < n) {
        a[static_cast<std::size_t>(i * n + i + 1)] = 1.0;
        a[static_cast<std::size_t>((i + 1) * n + i)] = -1.0;
      }
    }
    return detail::vector_from_host<B>(a);
  }
  // The same for this problem's n.
  Vector default_parameters() const { return default_parameters(n_); }

  // Names "A[i][j]" in θ order.
  std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    names.reserve(static_cast<std::size_t>(n_ * n_));
    for (Index i = 0; i < n_; ++i)
      for (Index j = 0; j < n_; ++j)
        names.push_back("A[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    return names;
  }

  // y_i = 1/(i + 1).
  Vector default_initial_state() const {
    std::vector<double> y(static_cast<std::size_t>(n_));
    for (Index i = 0; i < n_; ++i)
      y[static_cast<std::size_t>(i)] = 1.0 / static_cast<double>(i + 1);
    return detail::vector_from_host<B>(y);
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, n_, n_ * n_, y, theta, f);
    B::for_each_index(n_, detail::LinearRhsKernel{B::data(theta), B::data(y), B::data(f), n_});
  }

  // out_y = Aᵀ v, out_theta = vec(v yᵀ) (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, n_, n_ * n_, y, theta, v, out_y, out_theta);
    B::for_each_index(n_,
                      detail::LinearVjpStateKernel{B::data(theta), B::data(v), B::data(out_y), n_});
    B::for_each_index(
        n_ * n_, detail::LinearVjpParameterKernel{B::data(y), B::data(v), B::data(out_theta), n_});
  }

 private:
  static Index check_size(Index n) {
    if (n < 1 || n > kMaxStateSize)
      detail::fail<InvalidArgument>("LinearOde: state size n = ", n, " must be in [1, ",
                                    kMaxStateSize, "] (θ holds the n² entries of A)");
    return n;
  }

  Index n_;
};

// What the tools that run problems by name know about LinearOde
// (rewind/problems/problem_facts.hpp).
struct LinearOdeDeclaration {
  static ProblemFacts facts() {
    return {.name = "linear",
            .description = "y' = A y, a damped oscillator chain; theta = the n*n entries of A",
            .size_meaning = "dimension n",
            .default_n = 3,
            .default_dt = 0.01,
            .default_steps = 200,
            .horizon =
                "decays like e^(-0.1 t): at n = 3, J and its gradient underflow near t = "
                "3670 (367 000 steps), reported degenerate",
            .sized_parameter_domain = ParameterDomain::any};  // A[i][j]: any matrix
  }
  static LinearOde<> make(Index n) { return LinearOde<>(n); }
};

}  // namespace rwd
