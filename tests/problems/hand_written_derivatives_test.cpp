// Hand-written derivatives beside derived ones (rewind/model.hpp, issue 42 item 7): a templated
// model with a vjp or Jacobian of its own has rwd::auto_problem use it (the same gradient bits as
// the built-in problem with that vjp), while derived_vjp and derived_jacobian stay the derived
// ones; rwd::check_derivatives compares a hand-written vjp with the derived one entry by entry at
// 1e-12 — a correct one passes, a flipped sign or a wrong entry (even one finite differences
// cannot resolve) fails with the entry named — and a model without one is checked as before.
// Lorenz-63, Robertson and Lotka–Volterra re-expressed as templated models check the built-ins'
// hand-written vjps the same way.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "problems/models/templated_builtins.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/robertson.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"
#include "support/same_gradient_bits.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;
using test_models::Lorenz63WithOwnVjp;

// Lorenz-63 whose hand-written vjp has one sign flipped: ∂f_0/∂y_1 = −σ instead of σ.
struct Lorenz63FlippedSign : test_models::Lorenz63 {
  void vjp(double t, const double* y, const double* p, const double* v, double* out_y,
           double* out_p) const {
    Lorenz63WithOwnVjp{}.vjp(t, y, p, v, out_y, out_p);
    out_y[1] -= 2.0 * p[0] * v[0];
  }
};

// Lorenz-63 whose ∂f_2/∂β is off by 1e-9 relative: below what finite differences resolve.
struct Lorenz63SlightlyWrong : test_models::Lorenz63 {
  void vjp(double t, const double* y, const double* p, const double* v, double* out_y,
           double* out_p) const {
    Lorenz63WithOwnVjp{}.vjp(t, y, p, v, out_y, out_p);
    out_p[2] *= 1.0 + 1e-9;
  }
};

// Lorenz-63 with its Jacobian written by hand (column-major).
struct Lorenz63WithOwnJacobian : test_models::Lorenz63 {
  void jacobian(double /*t*/, const double* y, const double* p, double* J) const {
    const std::array<double, 9> by_columns{-p[0], p[1] - y[2], y[1],  p[0], -1.0,
                                           y[0],  0.0,         -y[0], -p[2]};
    for (int k = 0; k < 9; ++k) J[k] = by_columns[static_cast<std::size_t>(k)];
  }
};

// The same with ∂f_2/∂y_0 = x instead of y (the two swapped, a common slip).
struct Lorenz63WrongJacobian : Lorenz63WithOwnJacobian {
  void jacobian(double t, const double* y, const double* p, double* J) const {
    Lorenz63WithOwnJacobian::jacobian(t, y, p, J);
    J[2] = y[0];
  }
};

const Vector kLorenzState{{1.5, -2.0, 20.0}};
const Vector kLorenzTheta{{10.0, 28.0, 8.0 / 3.0}};

TEST(HandWrittenDerivatives, AutoProblemUsesTheModelsOwnVjp) {
  const auto problem = auto_problem(Lorenz63WithOwnVjp{});
  static_assert(AutoProblem<Lorenz63WithOwnVjp>::kHasHandWrittenVjp);
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const Vector y = testing::random_vector(3, rng, -20.0, 20.0);
    const Vector v = testing::random_vector(3, rng);
    Vector out_y(3), out_theta(3), own_y(3), own_theta(3), derived_y(3), derived_theta(3);
    problem.vjp(0.0, y, kLorenzTheta, v, out_y, out_theta);
    Lorenz63WithOwnVjp{}.vjp(0.0, y.data(), kLorenzTheta.data(), v.data(), own_y.data(),
                             own_theta.data());
    EXPECT_EQ(out_y, own_y);  // the model's own vjp, bit for bit
    EXPECT_EQ(out_theta, own_theta);
    problem.derived_vjp(0.0, y, kLorenzTheta, v, derived_y, derived_theta);
    EXPECT_LE((derived_y - own_y).cwiseAbs().maxCoeff(), 1e-13 * own_y.cwiseAbs().maxCoeff());
    EXPECT_LE((derived_theta - own_theta).cwiseAbs().maxCoeff(),
              1e-13 * own_theta.cwiseAbs().maxCoeff());
  }
}

// The same expressions as the built-in Lorenz63's rhs and vjp: the same gradient bits.
TEST(HandWrittenDerivatives, GradientWithTheOwnVjpIsTheBuiltInsBits) {
  const auto mine = auto_problem(Lorenz63WithOwnVjp{});
  const Lorenz63<> builtin;
  const Vector y0{{1.0, 1.0, 1.0}};
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.01, 200);
  ExplicitRungeKutta mine_stepper(mine, ButcherTableau::rk4(), control);
  ExplicitRungeKutta builtin_stepper(builtin, ButcherTableau::rk4(), control);
  const auto a = differentiate(mine_stepper, objective, y0, kLorenzTheta, StoreAllStrategy{});
  const auto b = differentiate(builtin_stepper, objective, y0, kLorenzTheta, StoreAllStrategy{});
  testing::expect_same_gradient_bits<B>(a, b);
}

TEST(HandWrittenDerivatives, ACorrectOwnVjpPassesAgainstTheDerivedOne) {
  const auto problem = auto_problem(Lorenz63WithOwnVjp{});
  const auto report = check_derivatives(problem, 0.0, kLorenzState, kLorenzTheta);
  EXPECT_TRUE(report.ok) << report.report();
  ASSERT_TRUE(report.against_derived);
  EXPECT_EQ(report.derived_state.mode, JacobianCheckMode::kFull);
  EXPECT_EQ(report.derived_state.comparisons, 9);
  EXPECT_EQ(report.derived_parameters.comparisons, 9);
  EXPECT_EQ(report.derived_state.reference, "derived vjp");
  EXPECT_FALSE(report.jacobian_against_derived);  // the model has no jacobian of its own
  EXPECT_LE(report.derived_state.worst_error, 1e-15);
  testing::expect_message(report.report(), "against the derived vjp: ok");
}

TEST(HandWrittenDerivatives, AFlippedSignIsCaughtAndNamed) {
  const auto report =
      check_derivatives(auto_problem(Lorenz63FlippedSign{}), 0.0, kLorenzState, kLorenzTheta);
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.derived_state.ok);
  EXPECT_TRUE(report.derived_parameters.ok);
  EXPECT_EQ(report.derived_state.failures, 1);
  EXPECT_EQ(report.derived_state.worst_row, 0);
  EXPECT_EQ(report.derived_state.worst_column, 1);
  EXPECT_EQ(report.derived_state.worst_vjp, -10.0);
  EXPECT_EQ(report.derived_state.worst_fd, 10.0);
  testing::expect_message(report.report(), "(∂f_0/∂y_1): vjp = -10, derived vjp = 10");
}

// An error of 1e-9 relative passes finite differences (tolerance 1e-6) but not the derived vjp.
TEST(HandWrittenDerivatives, AWrongEntryBelowFiniteDifferencesIsCaught) {
  const auto report =
      check_derivatives(auto_problem(Lorenz63SlightlyWrong{}), 0.0, kLorenzState, kLorenzTheta);
  EXPECT_TRUE(report.parameters.ok) << report.report();  // finite differences cannot see it
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.derived_parameters.ok);
  EXPECT_TRUE(report.derived_state.ok);
  EXPECT_EQ(report.derived_parameters.worst_row, 2);
  EXPECT_EQ(report.derived_parameters.worst_column, 2);
  testing::expect_message(report.report(), "∂f_2/∂θ_2");
}

// Above max_full_columns, random cotangents: the wrong column is still named.
TEST(HandWrittenDerivatives, RandomCotangentsNameTheColumn) {
  DerivativeCheckOptions options;
  options.max_full_columns = 0;
  const auto report = check_derivatives(auto_problem(Lorenz63FlippedSign{}), 0.0, kLorenzState,
                                        kLorenzTheta, options);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.derived_state.mode, JacobianCheckMode::kRandomCotangents);
  EXPECT_EQ(report.derived_state.comparisons, 3 * options.random_directions);
  EXPECT_EQ(report.derived_state.worst_column, 1);
  EXPECT_EQ(report.derived_state.worst_row, -1);
  EXPECT_TRUE(report.derived_parameters.ok);
  testing::expect_message(report.report(), "column 1 (∂f/∂y_1) of cotangent");
}

TEST(HandWrittenDerivatives, AModelWithoutItsOwnVjpIsCheckedAsBefore) {
  const auto problem = auto_problem(test_models::Lorenz63{});
  static_assert(!AutoProblem<test_models::Lorenz63>::kHasHandWrittenVjp);
  const auto report = check_derivatives(problem, 0.0, kLorenzState, kLorenzTheta);
  const auto by_differences =
      check_derivatives_by_finite_differences(problem, 0.0, kLorenzState, kLorenzTheta);
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_FALSE(report.against_derived);
  EXPECT_EQ(report.report(), by_differences.report());
  const Vector v{{0.3, -1.0, 2.0}};
  Vector a_y(3), a_theta(3), b_y(3), b_theta(3);
  problem.vjp(0.0, kLorenzState, kLorenzTheta, v, a_y, a_theta);
  problem.derived_vjp(0.0, kLorenzState, kLorenzTheta, v, b_y, b_theta);
  EXPECT_EQ(a_y, b_y);
  EXPECT_EQ(a_theta, b_theta);
}

TEST(HandWrittenDerivatives, AutoProblemUsesTheModelsOwnJacobian) {
  const auto problem = auto_problem(Lorenz63WithOwnJacobian{});
  Eigen::MatrixXd own, derived;
  problem.jacobian(0.0, kLorenzState, kLorenzTheta, own);
  problem.derived_jacobian(0.0, kLorenzState, kLorenzTheta, derived);
  EXPECT_EQ(own(1, 0), 28.0 - 20.0);  // ρ − z, from the model's column-major J
  EXPECT_EQ(own(0, 1), 10.0);
  EXPECT_EQ(own, derived);
  const auto report = check_derivatives(problem, 0.0, kLorenzState, kLorenzTheta);
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_TRUE(report.jacobian_against_derived);
  EXPECT_FALSE(report.against_derived);  // the vjp is the derived one: nothing to compare
  EXPECT_EQ(report.derived_jacobian.comparisons, 9);
}

TEST(HandWrittenDerivatives, AWrongOwnJacobianIsCaughtAndNamed) {
  const auto report =
      check_derivatives(auto_problem(Lorenz63WrongJacobian{}), 0.0, kLorenzState, kLorenzTheta);
  EXPECT_TRUE(report.state.ok);  // the vjp is derived, and right
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.derived_jacobian.ok);
  EXPECT_EQ(report.derived_jacobian.failures, 1);
  EXPECT_EQ(report.derived_jacobian.worst_row, 2);
  EXPECT_EQ(report.derived_jacobian.worst_column, 0);
  testing::expect_message(report.report(), "(∂f_2/∂y_0): vjp = 1.5, derived Jacobian = -2");
}

// The built-ins' hand-written vjps against templated models of the same right-hand sides, at
// points `sample(rng)` drawn like the built-ins' contract tests draw them: every entry to 1e-12.
template <class Builtin, class Model, class Sample>
void expect_builtin_passes(const Builtin& builtin, Model model, const Vector& theta,
                           const Sample& sample, std::uint64_t seed) {
  const auto derived = auto_problem(model);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 10; ++trial) {
    const Vector y = sample(rng);
    const auto report = check_derivatives(builtin, derived, 0.0, y, theta);
    EXPECT_TRUE(report.ok) << report.report();
    EXPECT_TRUE(report.against_derived);
    EXPECT_EQ(report.derived_state.comparisons, builtin.state_size() * builtin.state_size());
  }
}

TEST(HandWrittenDerivatives, BuiltInLorenz63MatchesItsTemplatedModel) {
  expect_builtin_passes(
      Lorenz63<>{}, test_models::Lorenz63{}, kLorenzTheta,
      [](std::mt19937_64& rng) { return testing::random_vector(3, rng, -20.0, 20.0); }, 1);
}

// Mid-reaction states, y2 small as on the real trajectory (finite differences need that scale).
TEST(HandWrittenDerivatives, BuiltInRobertsonMatchesItsTemplatedModel) {
  const Robertson robertson(/*with_integral=*/true);
  expect_builtin_passes(
      robertson, test_models::Robertson{}, robertson.default_parameters(),
      [](std::mt19937_64& rng) {
        auto uniform = [&rng](double lo, double hi) {
          return std::uniform_real_distribution<double>(lo, hi)(rng);
        };
        Vector y(4);
        y[0] = uniform(0.5, 1.0);
        y[1] = uniform(1e-6, 5e-5);
        y[2] = uniform(0.0, 0.5);
        y[3] = uniform(0.0, 1.0);
        return y;
      },
      2);
}

TEST(HandWrittenDerivatives, BuiltInLotkaVolterraMatchesItsTemplatedModel) {
  expect_builtin_passes(
      LotkaVolterra<>{}, test_models::LotkaVolterra{}, LotkaVolterra<>::default_parameters(),
      [](std::mt19937_64& rng) { return testing::random_vector(2, rng, 0.1, 5.0); }, 3);
}

// Lorenz-63's names and sizes with another right-hand side (f_2 shifted by 1).
struct NotLorenz63 : test_models::Lorenz63 {
  template <class T>
  void rhs(double t, const T* y, const T* p, T* f) const {
    test_models::Lorenz63::rhs(t, y, p, f);
    f[2] = f[2] + 1.0;
  }
};

// A templated model of another right-hand side is refused, naming the component.
TEST(HandWrittenDerivatives, RefusesATemplatedModelOfAnotherRhs) {
  const std::string other = testing::error_message<InvalidArgument>([] {
    check_derivatives(Lorenz63<>{}, auto_problem(NotLorenz63{}), 0.0, kLorenzState, kLorenzTheta);
  });
  testing::expect_message(other, "the templated model is not the problem's model: f_2");
  const std::string sizes = testing::error_message<InvalidArgument>([] {
    check_derivatives(Lorenz63<>{}, auto_problem(test_models::LotkaVolterra{}), 0.0, kLorenzState,
                      kLorenzTheta);
  });
  testing::expect_message(sizes,
                          "the problem has 3 states and 3 parameters, the templated "
                          "model 2 and 4");
}

TEST(HandWrittenDerivatives, RefusesABadDerivedTolerance) {
  DerivativeCheckOptions options;
  options.derived_tolerance = 0.0;
  const std::string message = testing::error_message<InvalidArgument>([&] {
    check_derivatives(auto_problem(Lorenz63WithOwnVjp{}), 0.0, kLorenzState, kLorenzTheta, options);
  });
  testing::expect_message(message, "derived_tolerance = 0 must be in (0, 1)");
}

}  // namespace
}  // namespace rwd
