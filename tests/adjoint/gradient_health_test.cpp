// A degenerate gradient is said so (rewind/adjoint/gradient_health.hpp): the criteria on their
// own (scale-free, no over- or underflow, zero and subnormal gradients), and every driver filling
// Summary::health — Gray–Scott with the parameters that used to be its default, whose pattern dies
// at n = 64, is reported negligible and stationary by the store-all and checkpointed drivers,
// the living defaults are not; a state at rest (Lotka–Volterra at its equilibrium) is stationary
// but its gradient is not negligible, for the backsolve driver too; a decay that underflows J
// (the linear chain) is a negligible gradient on a state that still moves.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

GradientHealth assess(double loss, const Vector& y0, const Vector& theta, const Vector& gy,
                      const Vector& gt, double change = 1e-3) {
  return assess_gradient<B>(loss, y0, theta, gy, gt, change, 100);
}

TEST(GradientHealth, SensitivityIsTheWeightedGradientOverJ) {
  const Vector y0{{3.0, 4.0}}, theta{{2.0}}, gy{{0.0, 1e-3}}, gt{{5e-4}};
  const GradientHealth h = assess(10.0, y0, theta, gy, gt);
  EXPECT_TRUE(h.assessed);
  // (5 · 1e-3 + 2 · 5e-4) / 10
  EXPECT_NEAR(h.sensitivity, 6e-4, 1e-18);
  EXPECT_FALSE(h.gradient_zero);
  EXPECT_FALSE(h.gradient_negligible);
  EXPECT_FALSE(h.state_stationary);
  EXPECT_FALSE(h.degenerate());
  EXPECT_EQ(h.describe(), "");
  EXPECT_EQ(h.final_step, 100);
}

TEST(GradientHealth, ItDoesNotDependOnUnitsNorOverflows) {
  const Vector y0{{3.0, 4.0}}, theta{{2.0}}, gy{{1e-9, 2e-9}}, gt{{3e-9}};
  const double rho = assess(7.0, y0, theta, gy, gt).sensitivity;
  for (double s : {1e-300, 1e-150, 1e150, 1e300}) {
    // J and the gradient in other units of J; y0 and θ in other units of their own.
    EXPECT_NEAR(assess(7.0 * s, y0, theta, gy * s, gt * s).sensitivity, rho, 1e-14 * rho) << s;
    EXPECT_NEAR(assess(7.0, y0 * s, theta * s, gy / s, gt / s).sensitivity, rho, 1e-14 * rho) << s;
  }
}

TEST(GradientHealth, NegligibleBelowTheThreshold) {
  const Vector y0{{1.0}}, theta{{1.0}}, zero{{0.0}};
  const double t = GradientHealth::kNegligibleSensitivity;
  EXPECT_TRUE(assess(1.0, y0, theta, Vector{{0.5 * t}}, zero).gradient_negligible);
  EXPECT_FALSE(assess(1.0, y0, theta, Vector{{2.0 * t}}, zero).gradient_negligible);
  const GradientHealth h = assess(2048.0, y0, theta, Vector{{5e-41}}, Vector{{3e-10}});
  EXPECT_TRUE(h.gradient_negligible);
  EXPECT_FALSE(h.gradient_zero);
  EXPECT_TRUE(h.degenerate());
  EXPECT_TRUE(contains(h.describe(), "degenerate: the gradient is negligible")) << h.describe();
  EXPECT_TRUE(contains(h.describe(), "1.46e-13")) << h.describe();
}

TEST(GradientHealth, AZeroGradientIsAlwaysDegenerate) {
  const Vector y0{{1.0, 2.0}}, theta{{1.0}}, zy{{0.0, 0.0}}, zt{{0.0}};
  for (double loss : {0.0, 1e-300, 1.0, 1e300}) {
    const GradientHealth h = assess(loss, y0, theta, zy, zt);
    EXPECT_TRUE(h.gradient_zero) << loss;
    EXPECT_TRUE(h.gradient_negligible) << loss;
    EXPECT_EQ(h.sensitivity, 0.0);
    EXPECT_TRUE(contains(h.describe(), "the gradient is zero")) << h.describe();
  }
}

TEST(GradientHealth, AnUnderflowedJWeighsAnUnderflowedGradient) {
  // J = 0 after underflow, the gradient subnormal: negligible, not "infinitely sensitive".
  const Vector y0{{1.0, 1.0, 1.0}}, theta{{1.0}};
  const GradientHealth h = assess(0.0, y0, theta, Vector{{7e-321, 0.0, 0.0}}, Vector{{3e-320}});
  EXPECT_TRUE(h.gradient_negligible);
  EXPECT_LT(h.sensitivity, 1e-10);
  // J = 0 with a real gradient (an exact fit that is not a minimum): not negligible.
  EXPECT_FALSE(assess(0.0, y0, theta, Vector{{1e-3, 0.0, 0.0}}, Vector{{0.0}}).gradient_negligible);
}

TEST(GradientHealth, AZeroInputCountsWithSizeOne) {
  const Vector zero_y0{{0.0, 0.0}}, theta{{1.0}};
  // With y0 = 0 the gradient with respect to it is weighed in absolute units: 1e-3 / 1.
  EXPECT_NEAR(assess(1.0, zero_y0, theta, Vector{{1e-3, 0.0}}, Vector{{0.0}}).sensitivity, 1e-3,
              1e-18);
}

TEST(GradientHealth, RelativeStepChange) {
  const Vector a{{3.0, 4.0}}, b{{3.0, 4.0 + 5e-13}}, zero{{0.0, 0.0}};
  EXPECT_EQ(relative_step_change<B>(a, a), 0.0);
  EXPECT_EQ(relative_step_change<B>(zero, zero), 0.0);
  EXPECT_EQ(relative_step_change<B>(zero, a), std::numeric_limits<double>::infinity());
  EXPECT_NEAR(relative_step_change<B>(b, a), 1e-13, 1e-16);
  // Scaled: neither huge nor subnormal states over- or underflow.
  for (double s : {1e-310, 1e-200, 1e200, 1e300})
    EXPECT_NEAR(relative_step_change<B>(Vector(a * s), Vector{{0.0, 0.0}}), 1.0, 1e-6) << s;
  EXPECT_NEAR(relative_step_change<B>(Vector{{1e300, 0.0}}, Vector{{-1e300, 0.0}}), 2.0, 1e-15);
  // A state at rest is stationary; a step below the threshold too, one above it is not.
  const Vector y0{{1.0}}, theta{{1.0}}, g{{1.0}};
  EXPECT_TRUE(assess(1.0, y0, theta, g, g, 0.0).state_stationary);
  EXPECT_TRUE(assess(1.0, y0, theta, g, g, 0.5e-12).state_stationary);
  EXPECT_FALSE(assess(1.0, y0, theta, g, g, 2e-12).state_stationary);
  // No step taken: nothing known.
  EXPECT_FALSE(assess(1.0, y0, theta, g, g, std::numeric_limits<double>::quiet_NaN()).degenerate());
  const GradientHealth h = assess(1.0, y0, theta, g, g, 0.0);
  EXPECT_TRUE(contains(h.describe(), "degenerate: the state is stationary")) << h.describe();
  EXPECT_TRUE(contains(h.describe(), "at step N = 100")) << h.describe();
  EXPECT_FALSE(contains(h.describe(), "negligible")) << h.describe();
}

// Gray–Scott at n = 64, RK4, dt = 1 from the default seed.
template <class Driver>
auto gray_scott_run(double feed, double kill, Index steps, Driver&& run) {
  GrayScott<> problem(64);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, steps));
  const auto objective = Objective<B>::terminal_squared_norm();
  return run(stepper, objective, problem.default_initial_state(),
             GrayScott<>::default_parameters(0.16, 0.08, feed, kill));
}

auto store_all = [](auto& stepper, const auto& objective, const Vector& y0, const Vector& theta) {
  StoreAllAdjoint driver(stepper, objective);
  return driver.run(y0, theta).summary;
};
auto revolve = [](auto& stepper, const auto& objective, const Vector& y0, const Vector& theta) {
  CheckpointedAdjoint driver(stepper, objective);
  return driver.run(y0, theta, revolve_schedule(10)).summary;
};

TEST(GradientHealthOfDrivers, TheDeadGrayScottPatternIsReported) {
  // (F, k) = (0.035, 0.065), the former default: at n = 64 the field is u = 1, v = 0 by step
  // 1000; the gradient is ~1e-40 at 3000 steps.
  for (const Summary& s : {gray_scott_run(0.035, 0.065, 1000, store_all),
                           gray_scott_run(0.035, 0.065, 3000, revolve)}) {
    const GradientHealth& h = s.health;
    SCOPED_TRACE(s.schedule);
    EXPECT_TRUE(h.assessed);
    EXPECT_TRUE(h.gradient_negligible);
    EXPECT_LT(h.sensitivity, 1e-10);
    EXPECT_TRUE(h.state_stationary);
    EXPECT_LT(h.final_step_change, 1e-15);
    EXPECT_EQ(h.final_step, s.steps);
    const std::string line = h.describe();
    EXPECT_TRUE(contains(line, "negligible") && contains(line, "stationary")) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;  // one line
    EXPECT_TRUE(contains(s.brief(), line)) << s.brief();
    EXPECT_TRUE(contains(s.full(), line)) << s.full();
  }
}

TEST(GradientHealthOfDrivers, TheLivingGrayScottDefaultsAreNot) {
  const Vector theta = GrayScott<>::default_parameters();
  const Summary s = gray_scott_run(theta[2], theta[3], 3000, revolve);
  EXPECT_TRUE(s.health.assessed);
  EXPECT_FALSE(s.health.degenerate()) << s.health.describe();
  EXPECT_GT(s.health.sensitivity, 1.0);
  EXPECT_GT(s.health.final_step_change, 1e-6);
  EXPECT_FALSE(contains(s.brief(), "degenerate")) << s.brief();
  EXPECT_TRUE(contains(s.full(), "relative sensitivity")) << s.full();
}

TEST(GradientHealthOfDrivers, AStateAtRestIsStationaryForEveryDriver) {
  // Lotka–Volterra at its equilibrium (γ/δ, α/β) = (3, 1.5): f = 0 exactly, the state never
  // moves, but J = ½|y|² depends on θ and y0 — stationary, not negligible.
  LotkaVolterra<> problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 200));
  const auto objective = Objective<B>::terminal_squared_norm();
  const Vector y0{{3.0, 1.5}}, theta = problem.default_parameters();
  StoreAllAdjoint store(stepper, objective);
  CheckpointedAdjoint checkpointed(stepper, objective);
  BacksolveAdjoint backsolve(stepper, objective);
  for (const Summary& s :
       {store.run(y0, theta).summary, checkpointed.run(y0, theta, revolve_schedule(4)).summary,
        backsolve.run(y0, theta).summary}) {
    SCOPED_TRACE(s.schedule);
    EXPECT_TRUE(s.health.state_stationary);
    EXPECT_EQ(s.health.final_step_change, 0.0);
    EXPECT_FALSE(s.health.gradient_negligible);
    EXPECT_TRUE(contains(s.brief(), "degenerate: the state is stationary")) << s.brief();
  }
  // Away from the equilibrium it orbits: nothing to report, for the backsolve driver too.
  EXPECT_FALSE(backsolve.run(problem.default_initial_state(), theta).summary.health.degenerate());
}

TEST(GradientHealthOfDrivers, ADecayThatUnderflowsJIsANegligibleGradient) {
  // The damped chain y' = A y decays like e^{-0.1 t}: at t = 4000, J = ½|y_N|² underflows to 0
  // and the gradient to subnormals, while the state, relatively, still moves.
  LinearOde<> problem(3);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 400000));
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const auto result = driver.run(problem.default_initial_state(), problem.default_parameters(),
                                 revolve_schedule(20));
  const GradientHealth& h = result.summary.health;
  EXPECT_EQ(result.loss, 0.0);
  EXPECT_TRUE(h.gradient_negligible) << h.sensitivity;
  EXPECT_FALSE(h.state_stationary) << h.final_step_change;
}

}  // namespace
}  // namespace rwd
