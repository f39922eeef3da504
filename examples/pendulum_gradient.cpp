// pendulum_gradient — the whole user journey on a model of your own, in one file.
//
// A damped pendulum  φ'' = −(g/L) sin φ − c φ'  written as a first-order system y = (φ, ω):
//   φ' = ω,   ω' = −θ_0 sin φ − θ_1 ω,     θ = (g/L, c).
// The objective is J = ½ φ(T)² + Σ_k ½ (φ_k − φ_obs,k)² over a few observed steps. We
//   1. check the model's vector-Jacobian products against finite differences,
//   2. compute J, dJ/dy0 and dJ/dθ with RK4 and with adaptive Dormand–Prince 5(4),
//   3. confirm one component by a finite difference of the whole run.
//
// Build against an installed rewind:  find_package(rewind REQUIRED)  +  rewind::rewind.
#include <cmath>
#include <cstdio>
#include <rewind/rewind.hpp>

namespace {

using B = rwd::EigenBackend;
using Vector = B::Vector;

struct DampedPendulum {
  using Backend = B;
  rwd::Index state_size() const { return 2; }
  rwd::Index parameter_size() const { return 2; }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    f[0] = y[1];
    f[1] = -theta[0] * std::sin(y[0]) - theta[1] * y[1];
  }
  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v.
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    out_y[0] = -theta[0] * std::cos(y[0]) * v[1];
    out_y[1] = v[0] - theta[1] * v[1];
    out_theta[0] = -std::sin(y[0]) * v[1];
    out_theta[1] = -y[1] * v[1];
  }
};

rwd::Objective<B> make_objective() {
  // Observations of the angle at steps 100, 200, 300; the terminal cost pulls φ(T) to zero.
  return rwd::Objective<B>(
      [](double, const Vector& y, Vector& grad) {
        grad << y[0], 0.0;
        return 0.5 * y[0] * y[0];
      },
      {100, 200, 300},
      [](rwd::Index step, double, const Vector& y, Vector& grad) {
        const double observed = 0.8 * std::exp(-0.002 * static_cast<double>(step));
        const double r = y[0] - observed;
        grad << r, 0.0;
        return 0.5 * r * r;
      });
}

}  // namespace

int main() {
  DampedPendulum model;
  Vector y0(2), theta(2);
  y0 << 1.0, 0.0;      // released from 1 rad at rest
  theta << 9.81, 0.3;  // g/L for L = 1 m, damping 0.3 /s

  // 1. Derivatives first: a wrong Jacobian silently gives the gradient of another model.
  const auto check = rwd::check_derivatives(model, 0.0, y0, theta);
  std::printf("%s\n", check.report().c_str());
  if (!check.ok) return 1;

  const auto objective = make_objective();

  // 2a. RK4, 400 fixed steps of 0.01 s.
  rwd::ExplicitRungeKutta rk4(model, rwd::ButcherTableau::rk4(),
                              rwd::StepControl::fixed(0.0, 0.01, 400));
  rwd::StoreAllAdjoint driver(rk4, objective);
  const auto result = driver.run(y0, theta);
  std::printf("RK4      J = %.12f  dJ/dy0 = (%+.9f, %+.9f)  dJ/dtheta = (%+.9f, %+.9f)\n",
              result.loss, result.grad_y0[0], result.grad_y0[1], result.grad_theta[0],
              result.grad_theta[1]);
  std::printf("%s\n", result.summary.brief().c_str());

  // 3. One component by central differences of the whole run: dJ/d(g/L).
  const double eps = 1e-6;
  Vector plus = theta, minus = theta;
  plus[0] += eps;
  minus[0] -= eps;
  const double fd =
      (rwd::forward_loss(rk4, objective, y0, plus) - rwd::forward_loss(rk4, objective, y0, minus)) /
      (2 * eps);
  std::printf("finite difference dJ/d(g/L) = %+.9f (adjoint %+.9f, relative difference %.1e)\n", fd,
              result.grad_theta[0], std::abs(fd - result.grad_theta[0]) / std::abs(fd));

  // 2b. Adaptive Dormand–Prince over the same 4 s. Observations are at step indices, so here only
  // the terminal cost is used; the accepted step sizes are constants of the differentiated map.
  rwd::ExplicitRungeKutta dopri(model, rwd::ButcherTableau::dormand_prince(),
                                rwd::StepControl::adaptive(0.0, 4.0, 1e-8, 1e-10));
  rwd::StoreAllAdjoint adaptive(dopri, rwd::Objective<B>::terminal_squared_norm());
  const auto r2 = adaptive.run(y0, theta);
  std::printf("DOPRI5   J = %.12f  dJ/dtheta = (%+.9f, %+.9f)  in %lld steps (%lld rejected)\n",
              r2.loss, r2.grad_theta[0], r2.grad_theta[1], static_cast<long long>(r2.summary.steps),
              static_cast<long long>(r2.summary.rejected_steps));
  return std::abs(fd - result.grad_theta[0]) < 1e-6 * std::abs(fd) ? 0 : 1;
}
