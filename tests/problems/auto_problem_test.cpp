// rwd::auto_problem (rewind/model.hpp): templated models whose vjps are derived by Sacado's
// forward mode. The SIR model and Lorenz-63 written as templated models give the hand-written
// vjps to 1e-13; the derivative checker passes them against finite differences; their gradients
// are the same bits under store-all, revolve, uniform, stage-aware, on-disk and online schedules
// and agree with finite differences of the whole run, including the parameters' effect through
// initial_state; Robertson's derived Jacobian and jvp equal the hand-written Jacobian and give
// BDF (CVODES, dense and GMRES) the built-in problem's gradient; a templated SDE's derived
// diffusion vjp gives the stochastic steppers the built-in problem's gradient; bad models are
// refused.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/sir_model.hpp"
#include "problems/models/templated_builtins.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/sde_problem.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/gradient_check.hpp"
#include "support/random_data.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

// SIR's vjp by hand: with a = β S I / N, ∂a/∂S = β I / N, ∂a/∂I = β S / N, ∂a/∂β = S I / N,
// ∂a/∂N = −a / N; f = (−a, a − γ I, γ I).
void sir_vjp_by_hand(const Vector& y, const Vector& p, const Vector& v, Vector& out_y,
                     Vector& out_theta) {
  const double s = y[0], i = y[1], beta = p[0], gamma = p[1], n = p[2];
  const double dv = v[1] - v[0];  // a enters f_0 with −1 and f_1 with +1
  out_y[0] = dv * beta * i / n;
  out_y[1] = dv * beta * s / n + gamma * (v[2] - v[1]);
  out_y[2] = 0.0;
  out_theta[0] = dv * s * i / n;
  out_theta[1] = i * (v[2] - v[1]);
  out_theta[2] = -dv * beta * s * i / (n * n);
}

// Lorenz-63 and Robertson (with the integral of y_3 as a fourth state) written once, generic in
// the scalar type, with the built-ins' expressions.
using TemplatedLorenz63 = test_models::Lorenz63;
using TemplatedRobertson = test_models::Robertson;

// Lorenz-63 with multiplicative noise g_i = s y_i, θ = (σ, ρ, β, s), as
// rwd::StochasticLorenz63 writes it.
using TemplatedStochasticLorenz63 = test_models::StochasticLorenz63;

static_assert(Problem<AutoProblem<Sir>>);
static_assert(!SdeProblem<AutoProblem<Sir>>);
static_assert(SdeProblem<AutoProblem<TemplatedStochasticLorenz63>>);
static_assert(Problem<AutoProblem<TemplatedLorenz63>>);

// max_i |a_i − b_i| / max_i |b_i|.
double relative_error(const Vector& a, const Vector& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  return (a - b).cwiseAbs().maxCoeff() / (scale > 0.0 ? scale : 1.0);
}

TEST(AutoProblem, SirVjpEqualsTheHandWrittenOne) {
  const auto problem = auto_problem(Sir{});
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const Vector y = testing::random_vector(3, rng, 0.0, 1000.0);
    const Vector theta = Vector{{0.5, 0.25, 1000.0}} + testing::random_vector(3, rng, -0.1, 0.1);
    const Vector v = testing::random_vector(3, rng);
    Vector out_y(3), out_theta(3), hand_y(3), hand_theta(3);
    problem.vjp(0.0, y, theta, v, out_y, out_theta);
    sir_vjp_by_hand(y, theta, v, hand_y, hand_theta);
    EXPECT_LE(relative_error(out_y, hand_y), 1e-13)
        << out_y.transpose() << " vs " << hand_y.transpose();
    EXPECT_LE(relative_error(out_theta, hand_theta), 1e-13)
        << out_theta.transpose() << " vs " << hand_theta.transpose();
  }
}

TEST(AutoProblem, Lorenz63VjpEqualsTheBuiltInHandWrittenOne) {
  const auto derived = auto_problem(TemplatedLorenz63{});
  const Lorenz63<> hand;
  std::mt19937_64 rng(63);
  for (int trial = 0; trial < 20; ++trial) {
    const Vector y = testing::random_vector(3, rng, -20.0, 20.0);
    const Vector theta = testing::random_vector(3, rng, 0.0, 30.0);
    const Vector v = testing::random_vector(3, rng);
    Vector f(3), hand_f(3), out_y(3), out_theta(3), hand_y(3), hand_theta(3);
    derived.rhs(0.0, y, theta, f);
    hand.rhs(0.0, y, theta, hand_f);
    EXPECT_EQ(f, hand_f);  // the same expressions: the same bits
    derived.vjp(0.0, y, theta, v, out_y, out_theta);
    hand.vjp(0.0, y, theta, v, hand_y, hand_theta);
    EXPECT_LE(relative_error(out_y, hand_y), 1e-13);
    EXPECT_LE(relative_error(out_theta, hand_theta), 1e-13);
  }
}

TEST(AutoProblem, PassesTheDerivativeChecker) {
  const auto sir = auto_problem(Sir{});
  const Vector theta = sir.default_parameters();
  const auto sir_report = check_derivatives(sir, 0.0, sir.initial_state(theta), theta);
  EXPECT_TRUE(sir_report.ok) << sir_report.report();
  const auto lorenz = auto_problem(TemplatedLorenz63{});
  const auto lorenz_report =
      check_derivatives(lorenz, 0.0, Vector{{1.0, -2.0, 20.0}}, Vector{{10.0, 28.0, 8.0 / 3.0}});
  EXPECT_TRUE(lorenz_report.ok) << lorenz_report.report();
}

// Contract 2 for a derived vjp: store-all, revolve at several budgets, uniform, stage-aware,
// every step's stages and revolve with its snapshots on disk all give the same bits.
TEST(AutoProblem, EveryScheduleAndStoreGivesTheSameGradientBits) {
  const auto problem = auto_problem(Sir{});
  const Vector theta = problem.default_parameters();
  const Vector y0 = problem.initial_state(theta);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 300));
  const auto objective = Objective<B>::terminal_squared_norm();
  const auto reference = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  const test::ScratchDirectory scratch("rewind-auto-problem");
  CheckpointOptions on_disk_options;
  on_disk_options.disk.directory = scratch.path();
  const std::vector<std::pair<std::string, CheckpointStrategy>> strategies = {
      {"revolve(2)", {revolve_schedule(2)}},
      {"revolve(5)", {revolve_schedule(5)}},
      {"revolve(17)", {revolve_schedule(17)}},
      {"uniform(7)", {uniform_schedule(7)}},
      {"stage-aware(12, 4)", {stage_aware_schedule(12, 4)}},
      {"store-all stages", {store_all_stages_schedule(4)}},
      {"revolve(5) on disk", {on_disk(revolve_schedule(5)), on_disk_options}}};
  for (const auto& [name, strategy] : strategies) {
    SCOPED_TRACE(name);
    const auto result = differentiate(stepper, objective, y0, theta, strategy);
    testing::expect_same_gradient_bits<B>(result, reference);
    EXPECT_TRUE(result.drift.bitwise_identical());
  }
}

// An adaptive run of unknown length: the online schedule gives store-all's bits.
TEST(AutoProblem, OnlineScheduleGivesStoreAllBits) {
  const auto problem = auto_problem(TemplatedLorenz63{});
  const Vector y0{{1.0, 1.0, 1.0}}, theta{{10.0, 28.0, 8.0 / 3.0}};
  ExplicitRungeKutta stepper(problem, ButcherTableau::dormand_prince(),
                             StepControl::adaptive(0.0, 2.0, 1e-7, 1e-9));
  const auto objective = Objective<B>::terminal_squared_norm();
  const auto reference = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  ASSERT_GT(reference.summary.steps, 50);
  const auto online =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(4)});
  testing::expect_same_gradient_bits<B>(online, reference);
}

TEST(AutoProblem, GradientAgreesWithFiniteDifferencesOfTheRun) {
  const auto problem = auto_problem(TemplatedLorenz63{});
  const Vector y0{{1.0, 1.0, 1.0}}, theta{{10.0, 28.0, 8.0 / 3.0}};
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 100));
  const auto objective = Objective<B>::terminal_squared_norm();
  const auto result = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  for (int which : {0, 1}) {
    const auto check = testing::directional_fd(
        stepper, objective, y0, theta, which == 0 ? result.grad_y0 : result.grad_theta, which,
        /*seed=*/17 + static_cast<std::uint64_t>(which), /*eps=*/1e-6);
    EXPECT_LT(check.rel_error(), 1e-6) << (which == 0 ? "dJ/dy0" : "dJ/dtheta") << ": adjoint "
                                       << check.adjoint << ", fd " << check.fd;
  }
}

// dJ/dθ through initial_state: total_parameter_gradient against central differences of
// θ ↦ J(run from initial_state(θ), θ), one parameter at a time.
TEST(AutoProblem, ParameterGradientIncludesTheInitialState) {
  const auto problem = auto_problem(Sir{});
  const Vector theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 200));
  const auto objective = Objective<B>::terminal_squared_norm();
  const auto result =
      differentiate(stepper, objective, problem.initial_state(theta), theta, StoreAllStrategy{});
  const Vector total = problem.total_parameter_gradient(theta, result.grad_y0, result.grad_theta);
  for (Index j = 0; j < 3; ++j) {
    const double h = 1e-6 * std::max(1.0, std::abs(theta[j]));
    auto loss_at = [&](double s) {
      Vector shifted = theta;
      shifted[j] += s;
      return forward_loss(stepper, objective, problem.initial_state(shifted), shifted);
    };
    const double fd = (loss_at(h) - loss_at(-h)) / (2.0 * h);
    EXPECT_NEAR(total[j], fd, 1e-6 * std::max(std::abs(fd), 1.0))
        << Sir::parameter_names[static_cast<std::size_t>(j)];
  }
  // N enters only through the initial state and the infection rate; without the initial
  // state's part the gradient with respect to N is a different number.
  EXPECT_GT(std::abs(total[2] - result.grad_theta[2]), 1e-3 * std::abs(total[2]));
}

TEST(AutoProblem, InitialStateVjpMatchesItsJacobian) {
  const auto problem = auto_problem(Sir{});
  const Vector theta{{0.4, 0.2, 500.0}}, w{{1.0, -2.0, 3.0}};
  Vector out(3);
  problem.initial_state_vjp(theta, w, out);
  // y0 = (0.99 N, 0.01 N, 0): (∂y0/∂θ)ᵀ w = (0, 0, 0.99 w_0 + 0.01 w_1).
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_DOUBLE_EQ(out[2], 0.99 * 1.0 + 0.01 * -2.0);
}

TEST(AutoProblem, NamesAndDefaultsComeFromTheModel) {
  const auto problem = auto_problem(Sir{});
  EXPECT_EQ(problem.state_size(), 3);
  EXPECT_EQ(problem.parameter_size(), 3);
  EXPECT_EQ(problem.state_names(), (std::vector<std::string>{"S", "I", "R"}));
  EXPECT_EQ(problem.parameter_names(), (std::vector<std::string>{"beta", "gamma", "N"}));
  EXPECT_EQ(problem.default_parameters(), (Vector{{0.5, 0.25, 1000.0}}));
  EXPECT_EQ(problem.initial_state(problem.default_parameters()), (Vector{{990.0, 10.0, 0.0}}));
}

TEST(AutoProblem, JacobianAndJvpEqualTheHandWrittenJacobian) {
  const auto derived = auto_problem(TemplatedRobertson{});
  const Robertson hand(/*with_integral=*/true);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const Vector y = testing::random_vector(4, rng, 0.0, 1.0);
    const Vector theta = hand.default_parameters();
    Eigen::MatrixXd j, hand_j;
    derived.jacobian(0.0, y, theta, j);
    hand.jacobian(0.0, y, theta, hand_j);
    EXPECT_LE((j - hand_j).cwiseAbs().maxCoeff(), 1e-13 * hand_j.cwiseAbs().maxCoeff());
    const Vector w = testing::random_vector(4, rng);
    Vector jw(4);
    derived.jvp(0.0, y, theta, w, jw);
    EXPECT_LE(relative_error(jw, hand_j * w), 1e-13);
  }
}

// BDF through CVODES with the derived Jacobian (dense Newton) and Jacobian–vector products
// (GMRES): the same gradient as the built-in Robertson with its hand-written Jacobian, to the
// solver's tolerances.
TEST(AutoProblem, BdfGradientMatchesTheHandWrittenProblem) {
  const auto derived = auto_problem(TemplatedRobertson{});
  const Robertson hand(/*with_integral=*/true);
  const Vector theta = hand.default_parameters(), y0 = hand.default_initial_state();
  Vector w = Vector::Zero(4);
  w[3] = 1.0;
  const auto objective = Objective<B>::terminal_linear(w);
  for (CvodesLinearSolver solver : {CvodesLinearSolver::dense, CvodesLinearSolver::gmres}) {
    SCOPED_TRACE(solver == CvodesLinearSolver::dense ? "dense" : "gmres");
    CvodesOptions options;
    options.linear_solver = solver;
    const IntervalGrid grid{0.0, 40.0, 4};
    CvodesIntervalStepper derived_stepper(derived, options, grid);
    CvodesIntervalStepper hand_stepper(hand, options, grid);
    const auto a = differentiate(derived_stepper, objective, y0, theta, StoreAllStrategy{});
    const auto b = differentiate(hand_stepper, objective, y0, theta, StoreAllStrategy{});
    EXPECT_NEAR(a.loss, b.loss, 1e-6 * std::abs(b.loss));
    EXPECT_LE(relative_error(a.grad_theta, b.grad_theta), 1e-4);
    EXPECT_LE(relative_error(a.grad_y0, b.grad_y0), 1e-4);
  }
}

TEST(AutoProblem, DiffusionVjpEqualsTheHandWrittenOne) {
  const auto derived = auto_problem(TemplatedStochasticLorenz63{});
  const StochasticLorenz63<> hand;
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 10; ++trial) {
    const Vector y = testing::random_vector(3, rng, -20.0, 20.0);
    const Vector theta = hand.default_parameters() + testing::random_vector(4, rng, -0.1, 0.1);
    const Vector v = testing::random_vector(3, rng);
    Vector g(3), hand_g(3), out_y(3), out_theta(4), hand_y(3), hand_theta(4);
    derived.diffusion(0.0, y, theta, g);
    hand.diffusion(0.0, y, theta, hand_g);
    EXPECT_EQ(g, hand_g);
    derived.diffusion_vjp(0.0, y, theta, v, out_y, out_theta);
    hand.diffusion_vjp(0.0, y, theta, v, hand_y, hand_theta);
    EXPECT_LE(relative_error(out_y, hand_y), 1e-13);
    EXPECT_LE(relative_error(out_theta, hand_theta), 1e-13);
  }
}

// The stochastic steppers with derived drift and diffusion derivatives: the same pathwise
// gradient as the built-in problem (to round-off), and the same bits under revolve.
TEST(AutoProblem, StochasticGradientMatchesTheHandWrittenProblem) {
  const auto derived = auto_problem(TemplatedStochasticLorenz63{});
  const StochasticLorenz63<> hand;
  const Vector y0 = hand.default_initial_state(), theta = hand.default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  for (SdeScheme scheme : {SdeScheme::euler_maruyama, SdeScheme::milstein}) {
    SCOPED_TRACE(scheme == SdeScheme::milstein ? "milstein" : "euler_maruyama");
    const StepControl control = StepControl::fixed(0.0, 0.001, 400);
    StochasticStepper derived_stepper(derived, scheme, control, /*seed=*/7);
    StochasticStepper hand_stepper(hand, scheme, control, /*seed=*/7);
    const auto a = differentiate(derived_stepper, objective, y0, theta, StoreAllStrategy{});
    const auto b = differentiate(hand_stepper, objective, y0, theta, StoreAllStrategy{});
    EXPECT_EQ(a.loss, b.loss);  // the same forward arithmetic
    EXPECT_LE(relative_error(a.grad_theta, b.grad_theta), 1e-10);
    EXPECT_LE(relative_error(a.grad_y0, b.grad_y0), 1e-10);
    const auto revolve = differentiate(derived_stepper, objective, y0, theta,
                                       CheckpointStrategy{revolve_schedule(6)});
    testing::expect_same_gradient_bits<B>(revolve, a);
  }
}

struct EmptyStateName {
  static constexpr std::array<const char*, 2> state_names{"x", ""};
  static constexpr std::array<const char*, 1> parameter_names{"k"};
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0];
    f[1] = y[0];
  }
};

struct RepeatedParameterName {
  static constexpr std::array<const char*, 1> state_names{"x"};
  static constexpr std::array<const char*, 3> parameter_names{"a", "b", "a"};
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -(p[0] + p[1] + p[2]) * y[0];
  }
};

TEST(AutoProblem, RefusesEmptyOrRepeatedNames) {
  const std::string empty =
      testing::error_message<InvalidArgument>([] { auto_problem(EmptyStateName{}); });
  testing::expect_message(empty, "state_names[1] is empty");
  const std::string repeated =
      testing::error_message<InvalidArgument>([] { auto_problem(RepeatedParameterName{}); });
  testing::expect_message(repeated, "parameter_names[2] = 'a' repeats parameter_names[0]");
}

TEST(AutoProblem, RefusesVectorsOfTheWrongSize) {
  const auto problem = auto_problem(Sir{});
  Vector f(2);
  const std::string message = testing::error_message<InvalidArgument>(
      [&] { problem.rhs(0.0, Vector::Zero(3), Vector::Ones(3), f); });
  testing::expect_message(message, "output f has 2 elements but must have 3");
}

}  // namespace
}  // namespace rwd
