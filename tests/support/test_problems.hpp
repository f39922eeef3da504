// Small problems with closed-form solutions, used only by the tests.
#pragma once

#include <cmath>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/types.hpp"

namespace rwd::testing {

// y0' = −2 a t y0²,  y1' = y0,  θ = (a). Nonlinear and non-autonomous, so a convergence test
// exercises every order condition (a linear autonomous problem only sees the stability
// polynomial). Exact solution from y(0) = (1, 0): y0 = 1/(1 + a t²), y1 = atan(√a t)/√a.
struct RationalDecay {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  Index state_size() const { return 2; }
  Index parameter_size() const { return 1; }
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    f[0] = -2.0 * theta[0] * t * y[0] * y[0];
    f[1] = y[0];
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    out_y[0] = -4.0 * theta[0] * t * y[0] * v[0] + v[1];
    out_y[1] = 0.0;
    out_theta[0] = -2.0 * t * y[0] * y[0] * v[0];
  }
  static Vector exact(double t, double a) {
    Vector y(2);
    y[0] = 1.0 / (1.0 + a * t * t);
    y[1] = std::atan(std::sqrt(a) * t) / std::sqrt(a);
    return y;
  }
};

}  // namespace rwd::testing
