// A tangent-linear Runge–Kutta step written independently of the engine, for dot-product
// (transposition) tests of the engine's adjoint step: ⟨λ, Φ' (v, w)⟩ = ⟨Φ'ᵀ λ, (v, w)⟩.
//
// The Jacobians of f are assembled densely from the problem's own vjp applied to unit vectors
// (row r of ∂f/∂y is (∂f/∂y)ᵀ e_r), so the test isolates the engine's transposition from the
// correctness of the model's derivatives (which the derivative checker covers).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/types.hpp"

namespace rwd::testing {

template <class P>
struct DenseJacobians {
  Eigen::MatrixXd dy, dtheta;
};

template <class P>
DenseJacobians<P> dense_jacobians(const P& problem, double t, const Eigen::VectorXd& y,
                                  const Eigen::VectorXd& theta) {
  using B = typename P::Backend;
  const Index n = problem.state_size(), p = problem.parameter_size();
  DenseJacobians<P> J{Eigen::MatrixXd(n, n), Eigen::MatrixXd(n, p)};
  auto yb = B::zeros(n), tb = B::zeros(p), e = B::zeros(n), oy = B::zeros(n), ot = B::zeros(p);
  B::copy_from_host({y.data(), std::size_t(n)}, yb);
  B::copy_from_host({theta.data(), std::size_t(p)}, tb);
  Eigen::VectorXd host_e = Eigen::VectorXd::Zero(n), row_y(n), row_t(p);
  for (Index r = 0; r < n; ++r) {
    host_e.setZero();
    host_e[r] = 1.0;
    B::copy_from_host({host_e.data(), std::size_t(n)}, e);
    problem.vjp(t, yb, tb, e, oy, ot);
    B::copy_to_host(oy, {row_y.data(), std::size_t(n)});
    B::copy_to_host(ot, {row_t.data(), std::size_t(p)});
    J.dy.row(r) = row_y.transpose();
    J.dtheta.row(r) = row_t.transpose();
  }
  return J;
}

template <class P>
Eigen::VectorXd host_rhs(const P& problem, double t, const Eigen::VectorXd& y,
                         const Eigen::VectorXd& theta) {
  using B = typename P::Backend;
  const Index n = problem.state_size(), p = problem.parameter_size();
  auto yb = B::zeros(n), tb = B::zeros(p), f = B::zeros(n);
  B::copy_from_host({y.data(), std::size_t(n)}, yb);
  B::copy_from_host({theta.data(), std::size_t(p)}, tb);
  problem.rhs(t, yb, tb, f);
  Eigen::VectorXd out(n);
  B::copy_to_host(f, {out.data(), std::size_t(n)});
  return out;
}

// Returns Φ_y v + Φ_θ w for the step of size h from (t, y).
template <class P>
Eigen::VectorXd tangent_step(const P& problem, const ButcherTableau& tab, double t, double h,
                             const Eigen::VectorXd& y, const Eigen::VectorXd& theta,
                             const Eigen::VectorXd& v, const Eigen::VectorXd& w) {
  const int s = tab.stages;
  std::vector<Eigen::VectorXd> k(s), kdot(s);
  for (int i = 0; i < s; ++i) {
    Eigen::VectorXd Y = y, Ydot = v;
    for (int j = 0; j < i; ++j) {
      Y += h * tab.a_at(i, j) * k[j];
      Ydot += h * tab.a_at(i, j) * kdot[j];
    }
    const double ti = t + tab.c[i] * h;
    k[i] = host_rhs(problem, ti, Y, theta);
    const auto J = dense_jacobians(problem, ti, Y, theta);
    kdot[i] = J.dy * Ydot + J.dtheta * w;
  }
  Eigen::VectorXd out = v;
  for (int i = 0; i < s; ++i) out += h * tab.b[i] * kdot[i];
  return out;
}

}  // namespace rwd::testing
