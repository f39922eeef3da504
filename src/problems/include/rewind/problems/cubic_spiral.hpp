// rewind/problems/cubic_spiral.hpp — the spiral of the neural-ODE literature: the true dynamics
// a neural ODE is trained to recover (Chen, Rubanova, Bettencourt & Duvenaud 2018, whose
// demonstration fits it).
//
//   dy/dt = (y³) A,   y a row vector, y³ elementwise,   A = [[a00, a01], [a10, a11]]
//   i.e.  y0' = a00 y0³ + a10 y1³,   y1' = a01 y0³ + a11 y1³.
//
// Parameters θ = (a00, a01, a10, a11), row-major; the classic values are
// A = [[−0.1, 2.0], [−2.0, −0.1]] (default_parameters()) with y(0) = (2, 0): a slowly contracting
// spiral that turns faster far from the origin. t ∈ [0, 25] sampled at 1000 points is the usual
// training set (`rewind generate spiral` writes it).
//
//   rwd::CubicSpiral spiral;
//   auto theta = spiral.default_parameters();
//   auto y = spiral.default_initial_state();        // (2, 0)
//   Eigen::VectorXd f(2);
//   spiral.rhs(0.0, y, theta, f);                   // f = (−0.8, 16)
#pragma once

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/types.hpp"

namespace rwd {

class CubicSpiral {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "spiral";

  Index state_size() const { return 2; }
  Index parameter_size() const { return 4; }

  Vector default_parameters() const {
    Vector theta(4);
    theta << -0.1, 2.0, -2.0, -0.1;
    return theta;
  }
  Vector default_initial_state() const {
    Vector y(2);
    y << 2.0, 0.0;
    return y;
  }

  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(name, 2, 4, y, theta, f);
    const double c0 = y[0] * y[0] * y[0], c1 = y[1] * y[1] * y[1];
    f[0] = theta[0] * c0 + theta[2] * c1;
    f[1] = theta[1] * c0 + theta[3] * c1;
  }

  // ∂f/∂y = [[3 a00 y0², 3 a10 y1²], [3 a01 y0², 3 a11 y1²]];
  // ∂f/∂θ: f0 depends on (a00, a10) through (y0³, y1³), f1 on (a01, a11) likewise.
  void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(name, 2, 4, y, theta, v, out_y, out_theta);
    const double s0 = 3.0 * y[0] * y[0], s1 = 3.0 * y[1] * y[1];
    const double c0 = y[0] * y[0] * y[0], c1 = y[1] * y[1] * y[1];
    out_y[0] = s0 * (theta[0] * v[0] + theta[1] * v[1]);
    out_y[1] = s1 * (theta[2] * v[0] + theta[3] * v[1]);
    out_theta[0] = c0 * v[0];
    out_theta[1] = c0 * v[1];
    out_theta[2] = c1 * v[0];
    out_theta[3] = c1 * v[1];
  }
};

}  // namespace rwd
