// The stiff engines' adjoints against finite differences in extended precision (long double):
// the discrete map of a Rosenbrock method (rodas4, ros3p) and of an ESDIRK method (esdirk43) on
// Robertson's kinetics, written again here over long double with the tableaux's own (double)
// coefficients — the engine's formula, step for step — differenced centrally in long double
// (ε = 2⁻⁶⁴) and extrapolated.
// The adjoint, computed in double, is the exact derivative of the map up to double rounding
// (Rosenbrock: no iteration; ESDIRK: Newton converged to 10⁻¹⁴), so the two agree to 10⁻¹⁰
// relative, every parameter and every initial component — where double finite differences could
// only say 10⁻⁷.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

#include <Eigen/Dense>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/problems/robertson.hpp"

namespace rwd {
namespace {

using LD = long double;
using StateLD = Eigen::Matrix<LD, 3, 1>;
using MatrixLD = Eigen::Matrix<LD, 3, 3>;
using ParametersLD = std::array<LD, 3>;

// Robertson's f and ∂f/∂y (rwd::Robertson's expressions) in long double.
StateLD robertson_rhs(const StateLD& y, const ParametersLD& p) {
  StateLD f;
  f[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
  f[2] = p[2] * y[1] * y[1];
  f[1] = -f[0] - f[2];
  return f;
}
MatrixLD robertson_jacobian(const StateLD& y, const ParametersLD& p) {
  MatrixLD J;
  J << -p[0], p[1] * y[2], p[1] * y[1],                    //
      p[0], -p[1] * y[2] - 2 * p[2] * y[1], -p[1] * y[1],  //
      0, 2 * p[2] * y[1], 0;
  return J;
}

// `steps` steps of h of the Rosenbrock engine's map (rewind/integrators/rosenbrock.hpp:
// M = I − hγJ(y_n); g_i = y_n + Σ a_ij U_j; M U_i = hγ f(g_i) + Σ γ c_ij U_j; y += Σ m_i U_i).
StateLD rosenbrock_map(const RosenbrockTableau& t, StateLD y, const ParametersLD& p, LD h,
                       int steps) {
  const int s = t.stages;
  for (int n = 0; n < steps; ++n) {
    const LD hg = h * static_cast<LD>(t.gamma);
    const auto lu = (MatrixLD::Identity() - hg * robertson_jacobian(y, p)).fullPivLu();
    std::vector<StateLD> U(static_cast<std::size_t>(s));
    StateLD next = y;
    for (int i = 0; i < s; ++i) {
      StateLD g = y;
      for (int j = 0; j < i; ++j) g += static_cast<LD>(t.a_at(i, j)) * U[j];
      StateLD q = hg * robertson_rhs(g, p);
      for (int j = 0; j < i; ++j) q += static_cast<LD>(t.gamma * t.c_at(i, j)) * U[j];
      U[i] = lu.solve(q);
      next += static_cast<LD>(t.m[static_cast<std::size_t>(i)]) * U[i];
    }
    y = next;
  }
  return y;
}

// `steps` steps of h of a diagonally implicit method: Y_i = y_n + h Σ_{j<i} a_ij k_j + h a_ii
// f(Y_i) solved by Newton with the exact Jacobian to round-off, k_i = f(Y_i), y += h Σ b_i k_i.
StateLD dirk_map(const ImplicitTableau& t, StateLD y, const ParametersLD& p, LD h, int steps) {
  const int s = t.stages;
  for (int n = 0; n < steps; ++n) {
    std::vector<StateLD> k(static_cast<std::size_t>(s));
    for (int i = 0; i < s; ++i) {
      StateLD base = y;
      for (int j = 0; j < i; ++j) base += h * static_cast<LD>(t.a_at(i, j)) * k[j];
      const LD ha = h * static_cast<LD>(t.a_at(i, i));
      StateLD Y = i == 0 ? y : base;
      for (int it = 0; ha != 0 && it < 50; ++it) {
        const StateLD residual = Y - base - ha * robertson_rhs(Y, p);
        const StateLD update =
            (MatrixLD::Identity() - ha * robertson_jacobian(Y, p)).fullPivLu().solve(residual);
        Y -= update;
        if (update.cwiseAbs().maxCoeff() <= 1e-19L * (1 + Y.cwiseAbs().maxCoeff())) break;
      }
      if (ha == 0) Y = base;
      k[i] = robertson_rhs(Y, p);
    }
    for (int i = 0; i < s; ++i) y += h * static_cast<LD>(t.b[static_cast<std::size_t>(i)]) * k[i];
  }
  return y;
}

// J = wᵀ y_N: y₂ weighted up to the size of the others.
const std::array<double, 3> kWeights{1.0, 1e4, 1.0};

template <class Map>
void expect_adjoint_is_the_long_double_derivative(const GradientResult<Eigen::VectorXd>& adjoint,
                                                  const Eigen::VectorXd& y0,
                                                  const Eigen::VectorXd& theta, Map&& map) {
  const auto loss = [&](const StateLD& y, const ParametersLD& p) {
    const StateLD end = map(y, p);
    LD j = 0;
    for (int i = 0; i < 3; ++i) j += static_cast<LD>(kWeights[i]) * end[i];
    return j;
  };
  StateLD y;
  ParametersLD p;
  for (int i = 0; i < 3; ++i) {
    y[i] = static_cast<LD>(y0[i]);
    p[i] = static_cast<LD>(theta[i]);
  }
  // Central differences with steps h and h/2, extrapolated (Richardson: the O(h²) terms cancel),
  // h = 3·10⁻³ of the component itself — y₂ ≈ 2·10⁻⁵ enters through k3 y₂², and an absolute step
  // small enough for it would drown in rounding. Measured: 10⁻¹⁵–10⁻¹¹ from the adjoint.
  const auto derivative = [&](auto perturbed, LD at) {
    const LD h = 3e-3L * at;
    const auto central = [&](LD step) { return (perturbed(step) - perturbed(-step)) / (2 * step); };
    return static_cast<double>((4 * central(h / 2) - central(h)) / 3);
  };
  for (int k = 0; k < 3; ++k) {
    const double difference = derivative(
        [&](LD step) {
          ParametersLD moved = p;
          moved[k] += step;
          return loss(y, moved);
        },
        p[k]);
    EXPECT_NEAR(adjoint.grad_theta[k], difference, 1e-10 * std::abs(difference)) << "dJ/dθ" << k;
  }
  for (int k = 0; k < 3; ++k) {
    const double difference = derivative(
        [&](LD step) {
          StateLD moved = y;
          moved[k] += step;
          return loss(moved, p);
        },
        y[k]);
    EXPECT_NEAR(adjoint.grad_y0[k], difference, 1e-10 * std::abs(difference)) << "dJ/dy0" << k;
  }
}

Objective<EigenBackend> weighted_objective() {
  return Objective<EigenBackend>::terminal_linear(
      Eigen::VectorXd{{kWeights[0], kWeights[1], kWeights[2]}});
}

TEST(ExtendedPrecisionCheck, RosenbrockAdjointsAreTheDerivativeOfTheMap) {
  const Robertson problem;
  const Eigen::VectorXd theta = problem.default_parameters();
  const Eigen::VectorXd y0{{0.98, 2e-5, 0.01998}};  // past the first transient: every entry moves
  constexpr double h = 2e-3;
  constexpr int steps = 60;
  for (const std::string method : {"rodas4", "ros3p"}) {
    SCOPED_TRACE(method);
    const RosenbrockTableau tableau = RosenbrockTableau::by_name(method);
    RosenbrockStepper stepper(problem, tableau, StepControl::fixed(0.0, h, steps));
    StoreAllAdjoint driver(stepper, weighted_objective());
    expect_adjoint_is_the_long_double_derivative(
        driver.run(y0, theta), y0, theta, [&](const StateLD& y, const ParametersLD& p) {
          return rosenbrock_map(tableau, y, p, static_cast<LD>(h), steps);
        });
  }
}

TEST(ExtendedPrecisionCheck, EsdirkAdjointIsTheDerivativeOfTheMapToTheNewtonTolerance) {
  const Robertson problem;
  const Eigen::VectorXd theta = problem.default_parameters();
  const Eigen::VectorXd y0{{0.98, 2e-5, 0.01998}};
  constexpr double h = 2e-3;
  constexpr int steps = 60;
  const ImplicitTableau tableau = ImplicitTableau::esdirk43();
  NewtonOptions newton;
  newton.rtol = 1e-14;
  newton.atol = 1e-20;
  DiagonallyImplicitRungeKutta stepper(problem, tableau, StepControl::fixed(0.0, h, steps), newton);
  StoreAllAdjoint driver(stepper, weighted_objective());
  expect_adjoint_is_the_long_double_derivative(
      driver.run(y0, theta), y0, theta, [&](const StateLD& y, const ParametersLD& p) {
        return dirk_map(tableau, y, p, static_cast<LD>(h), steps);
      });
}

}  // namespace
}  // namespace rwd
