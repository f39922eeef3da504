// rewind/problems/robertson.hpp — Robertson's chemical kinetics (1966), the classic stiff test.
//
//   y1' = −p1 y1 + p2 y2 y3
//   y2' =  p1 y1 − p2 y2 y3 − p3 y2²
//   y3' =  p3 y2²
//  (q'  =  y3                     with_integral: q(T) = ∫ y3 dt, the functional of SUNDIALS'
//                                 cvsRoberts_ASAi_dns example, as a fourth state component)
//
// θ = (p1, p2, p3) = (0.04, 10⁴, 3·10⁷) by default, y(0) = (1, 0, 0 [, 0]). The rates span eleven
// orders of magnitude: explicit methods need steps below ~10⁻⁴ for stability over a horizon of
// 4·10⁷, BDF takes a few hundred. Provides the Jacobian for implicit solvers and the second
// derivatives (jvp_vjp) of the Rosenbrock methods' exact adjoints; autonomous.
//
//   rwd::Robertson model(/*with_integral=*/true);
//   rwd::CvodesIntervalStepper stepper(model, options, rwd::IntervalGrid{0.0, 4e7, 20});
#pragma once

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {

class Robertson {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "robertson";
  static constexpr bool autonomous = true;  // f does not depend on t

  explicit Robertson(bool with_integral = false) : n_(with_integral ? 4 : 3) {}

  Index state_size() const { return n_; }
  Index parameter_size() const { return 3; }
  bool with_integral() const { return n_ == 4; }

  std::vector<std::string> parameter_names() const { return {"p1", "p2", "p3"}; }

  Vector default_parameters() const {
    Vector theta(3);
    theta << 0.04, 1.0e4, 3.0e7;
    return theta;
  }
  Vector default_initial_state() const {
    Vector y = Vector::Zero(n_);
    y[0] = 1.0;
    return y;
  }

  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(name, n_, 3, y, theta, f);
    const double p1 = theta[0], p2 = theta[1], p3 = theta[2];
    f[0] = -p1 * y[0] + p2 * y[1] * y[2];
    f[2] = p3 * y[1] * y[1];
    f[1] = -f[0] - f[2];
    if (n_ == 4) f[3] = y[2];
  }

  void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(name, n_, 3, y, theta, v, out_y, out_theta);
    const double p1 = theta[0], p2 = theta[1], p3 = theta[2];
    const double d12 = v[1] - v[0], d23 = v[2] - v[1];  // the reactions move mass 1→2 and 2→3
    out_y[0] = p1 * d12;
    out_y[1] = -p2 * y[2] * d12 + 2.0 * p3 * y[1] * d23;
    out_y[2] = -p2 * y[1] * d12 + (n_ == 4 ? v[3] : 0.0);
    if (n_ == 4) out_y[3] = 0.0;
    out_theta[0] = y[0] * d12;
    out_theta[1] = -y[1] * y[2] * d12;
    out_theta[2] = y[1] * y[1] * d23;
  }

  // Second derivatives (the Rosenbrock adjoint's): out_y = ∇_y [wᵀ (∂f/∂y) u], out_theta =
  // ∇_θ [wᵀ (∂f/∂y) u] (overwritten). With the reaction rates r1 = p1 y1, r2 = p2 y2 y3,
  // r3 = p3 y2², wᵀ J u = d12 p1 u1 − d12 p2 (y3 u2 + y2 u3) + 2 d23 p3 y2 u2 (+ w4 u3), where
  // d12 = w2 − w1 and d23 = w3 − w2 (components counted from 1 here).
  void jvp_vjp(double, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(name, n_, 3, y, theta, w, out_y, out_theta);
    detail::require_length(name, "direction u", u.size(), n_);
    const double p2 = theta[1], p3 = theta[2];
    const double d12 = w[1] - w[0], d23 = w[2] - w[1];
    out_y[0] = 0.0;
    out_y[1] = -p2 * u[2] * d12 + 2.0 * p3 * u[1] * d23;
    out_y[2] = -p2 * u[1] * d12;
    if (n_ == 4) out_y[3] = 0.0;
    out_theta[0] = u[0] * d12;
    out_theta[1] = -(y[2] * u[1] + y[1] * u[2]) * d12;
    out_theta[2] = 2.0 * y[1] * u[1] * d23;
  }

  // ∂f/∂y, n × n (overwritten).
  void jacobian(double, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    detail::require_length(name, "state y", y.size(), n_);
    detail::require_length(name, "parameter vector theta", theta.size(), 3);
    const double p1 = theta[0], p2 = theta[1], p3 = theta[2];
    J.setZero(n_, n_);
    J(0, 0) = -p1;
    J(0, 1) = p2 * y[2];
    J(0, 2) = p2 * y[1];
    J(2, 1) = 2.0 * p3 * y[1];
    J(1, 0) = p1;
    J(1, 1) = -p2 * y[2] - 2.0 * p3 * y[1];
    J(1, 2) = -p2 * y[1];
    if (n_ == 4) J(3, 2) = 1.0;
  }

 private:
  Index n_;
};

// What the tools that run problems by name know about Robertson
// (rewind/problems/problem_facts.hpp). Stiff: its defaults are BDF's, where a step is one interval
// (40 of 1e6 make 4e7); the implicit and Rosenbrock methods run it too, adaptive or with fixed
// steps small enough for the first transient (from y2 = 0, esdirk43 refuses h = 4e-3 and runs
// h = 2e-3).
struct RobertsonDeclaration {
  static ProblemFacts facts() {
    return {.name = "robertson",
            .alias = "roberts",
            .description =
                "Robertson kinetics, stiff: --method bdf (default), esdirk43, rodas4, ... "
                "(implicit, Rosenbrock); theta = (p1, p2, p3) = (0.04, 1e4, 3e7)",
            .fixed_state_size = 3,
            .default_dt = 1.0e6,
            .default_steps = 40,
            .stiff = true,
            .parameters = {{"p1", ParameterDomain::positive},
                           {"p2", ParameterDomain::positive},
                           {"p3", ParameterDomain::positive}},
            .fields = state_components({"y1", "y2", "y3"})};
  }
  static Robertson make(Index /*fixed size*/) { return Robertson(); }
};

}  // namespace rwd
