// Runs that end on a condition: the projectile's range and its gradient through the landing time
// located inside the last step, against the closed form (no drag: RK4 is exact on a parabola)
// and against finite differences of the whole event-stopped run (with drag); and the errors of
// a condition that never holds or an event that does not change sign.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "rewind/problems/projectile.hpp"
#include "rewind/rewind.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

struct Shot {
  double speed = 30.0;
  double angle = 0.7;
  double g = 9.81;
  double k = 0.0;
  double dt = 0.01;
  Index cap = 100000;
};

struct ShotGradient {
  double range = 0.0;
  double d_speed = 0.0, d_angle = 0.0, d_g = 0.0, d_k = 0.0;
  Index steps = 0;
  double t_land = 0.0;
};

ShotGradient fly(const Shot& s) {
  Projectile<> shot;
  ExplicitRungeKutta stepper(shot, ButcherTableau::rk4(), StepControl::fixed(0.0, s.dt, s.cap));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_linear(Projectile<>::range_weights()), {},
                         Projectile<>::landing());
  const Vec y0 = Projectile<>::launch_state(s.speed, s.angle);
  const auto result = driver.run(y0, Projectile<>::default_parameters(s.g, s.k));
  ShotGradient out;
  out.range = result.loss;
  const auto dv = Projectile<>::launch_state_derivative_speed(s.speed, s.angle);
  const auto da = Projectile<>::launch_state_derivative_angle(s.speed, s.angle);
  for (int i = 0; i < 4; ++i) {
    out.d_speed += result.grad_y0[i] * dv[static_cast<std::size_t>(i)];
    out.d_angle += result.grad_y0[i] * da[static_cast<std::size_t>(i)];
  }
  out.d_g = result.grad_theta[0];
  out.d_k = result.grad_theta[1];
  out.steps = result.summary.steps;
  out.t_land = result.summary.t_final;
  return out;
}

TEST(StopCondition, DragFreeRangeAndGradientMatchTheClosedForm) {
  const Shot s;
  const ShotGradient r = fly(s);
  const double range = s.speed * s.speed * std::sin(2 * s.angle) / s.g;
  const double flight = 2 * s.speed * std::sin(s.angle) / s.g;
  EXPECT_EQ(r.steps, static_cast<Index>(std::ceil(flight / s.dt)));
  EXPECT_NEAR(r.t_land, flight, 1e-12 * flight);
  EXPECT_NEAR(r.range, range, 1e-12 * range);
  // dR/dα = 2 v² cos 2α / g, dR/dv = 2 v sin 2α / g, dR/dg = −R/g: through the landing time.
  EXPECT_NEAR(r.d_angle, 2 * s.speed * s.speed * std::cos(2 * s.angle) / s.g, 1e-9 * range);
  EXPECT_NEAR(r.d_speed, 2 * s.speed * std::sin(2 * s.angle) / s.g, 1e-10 * range / s.speed);
  EXPECT_NEAR(r.d_g, -range / s.g, 1e-10 * range / s.g);
}

TEST(StopCondition, GradientWithDragMatchesFiniteDifferencesOfTheWholeRun) {
  Shot s;
  s.k = 0.01;
  const ShotGradient r = fly(s);
  EXPECT_LT(r.range, s.speed * s.speed * std::sin(2 * s.angle) / s.g);  // drag shortens it
  auto central = [&](auto set, double h) {
    Shot plus = s, minus = s;
    set(plus, +h);
    set(minus, -h);
    return (fly(plus).range - fly(minus).range) / (2 * h);
  };
  const double fd_angle = central([](Shot& x, double h) { x.angle += h; }, 1e-6);
  const double fd_speed = central([](Shot& x, double h) { x.speed += h; }, 1e-5);
  const double fd_g = central([](Shot& x, double h) { x.g += h; }, 1e-6);
  const double fd_k = central([](Shot& x, double h) { x.k += h; }, 1e-8);
  EXPECT_NEAR(r.d_angle, fd_angle, 1e-6 * std::abs(fd_angle) + 1e-7);
  EXPECT_NEAR(r.d_speed, fd_speed, 1e-6 * std::abs(fd_speed));
  EXPECT_NEAR(r.d_g, fd_g, 1e-6 * std::abs(fd_g));
  EXPECT_NEAR(r.d_k, fd_k, 1e-6 * std::abs(fd_k));
}

TEST(StopCondition, AConditionThatNeverHoldsIsAnErrorAtTheCap) {
  Shot s;
  s.cap = 50;  // lands after ~428 steps
  try {
    fly(s);
    FAIL() << "expected an error";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("did not hold"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("step 50"), std::string::npos) << e.what();
  }
}

TEST(StopCondition, AnEventWithoutASignChangeInTheLastStepIsRefused) {
  Projectile<> shot;
  ExplicitRungeKutta stepper(shot, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 10000));
  StopCondition<B> stop = Projectile<>::landing();
  stop.event = [](double, const Vec& y) { return y[1] + 100.0; };  // never crosses zero
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_linear(Projectile<>::range_weights()), {},
                         stop);
  try {
    driver.run(Projectile<>::launch_state(30.0, 0.7), Projectile<>::default_parameters());
    FAIL() << "expected an error";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("does not change sign"), std::string::npos) << e.what();
  }
}

TEST(StopCondition, AnIncompleteConditionIsRefusedBeforeAnyWork) {
  Projectile<> shot;
  ExplicitRungeKutta stepper(shot, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 10));
  StopCondition<B> no_test;
  EXPECT_THROW(StoreAllAdjoint(stepper, Objective<B>::terminal_squared_norm(), {}, no_test),
               InvalidArgument);
  StopCondition<B> half_event = Projectile<>::landing();
  half_event.event_gradient = nullptr;
  EXPECT_THROW(StoreAllAdjoint(stepper, Objective<B>::terminal_squared_norm(), {}, half_event),
               InvalidArgument);
}

}  // namespace
}  // namespace rwd
