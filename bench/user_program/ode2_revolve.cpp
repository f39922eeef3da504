// ode2_revolve — the smallest checkpointed program a user writes: the damped pendulum of
// examples/pendulum_gradient.cpp (2 states, 2 parameters, the same objective), differentiated
// once with rwd::differentiate over 400 RK4 steps, revolve with 10 snapshots in memory. Built by
// bench/user_program/measure.sh against a build tree, to see what such a program compiles, links
// and loads (bench/results/user_program.md); not part of the build.
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
  const DampedPendulum model;
  const auto objective = make_objective();
  Vector y0(2), theta(2);
  y0 << 1.0, 0.0;
  theta << 9.81, 0.1;
  rwd::ExplicitRungeKutta rk4(model, rwd::ButcherTableau::rk4(),
                              rwd::StepControl::fixed(0.0, 0.01, 400));
  auto result = rwd::differentiate(rk4, objective, y0, theta,
                                   rwd::CheckpointStrategy{rwd::revolve_schedule(10)});
  std::printf("J = %.17g, dJ/dtheta = (%.17g, %.17g)\n", result.loss, result.grad_theta[0],
              result.grad_theta[1]);
  return 0;
}
