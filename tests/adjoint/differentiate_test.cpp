// rwd::differentiate: one entry point, the adjoint method an argument. Each strategy gives its
// driver's bits; store-all and checkpointing give the same gradient; a strategy chosen at run
// time gives the same as one chosen at compile time; what a strategy cannot do is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

void expect_same_gradient(const GradientResult<Vec>& a, const GradientResult<Vec>& b) {
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0);
  EXPECT_TRUE(same_bits(a.grad_y0, b.grad_y0));
  EXPECT_TRUE(same_bits(a.grad_theta, b.grad_theta));
  EXPECT_TRUE(same_bits(a.y_final, b.y_final));
}

TEST(Differentiate, EachStrategyGivesItsDriversBits) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 80));
  const auto objective = Objective<B>::terminal_squared_norm();

  StoreAllAdjoint store_all(stepper, objective);
  const auto reference = store_all.run(y0, theta);
  const auto a = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  expect_same_gradient(a, reference);
  EXPECT_EQ(a.summary.schedule, "store-all");

  const auto b =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(6)});
  expect_same_gradient(b, reference);  // schedule independence
  EXPECT_EQ(b.summary.schedule, "revolve(c = 6)");
  EXPECT_TRUE(b.drift.bitwise_identical());

  BacksolveAdjoint backsolve(stepper, objective);
  const auto expected = backsolve.run(y0, theta);
  const auto c = differentiate(stepper, objective, y0, theta, BacksolveStrategy{});
  expect_same_gradient(c, expected);
  EXPECT_EQ(c.anchors, expected.anchors);

  // Chosen at run time: the same bits as chosen at compile time.
  for (const AdjointStrategy& chosen : {AdjointStrategy{StoreAllStrategy{}},
                                        AdjointStrategy{CheckpointStrategy{uniform_schedule(9)}},
                                        AdjointStrategy{BacksolveStrategy{}}}) {
    const GradientResult<Vec> r = differentiate(stepper, objective, y0, theta, chosen);
    expect_same_gradient(r,
                         std::holds_alternative<BacksolveStrategy>(chosen) ? expected : reference);
  }
}

// The summary's counters mean the same in every driver: rhs evaluations inside adjoint steps are
// "reverse" (the same work for store-all and a checkpointed run, which reverse the same steps the
// same way), everything else "forward", which differs only by the recomputed steps' evaluations.
TEST(Differentiate, DerivativeCountersMeanTheSameInEveryDriver) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 80));
  const auto objective = Objective<B>::terminal_squared_norm();
  const Summary all = differentiate(stepper, objective, y0, theta, StoreAllStrategy{}).summary;
  const Summary revolve =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(6)}).summary;
  ASSERT_GT(revolve.recomputed_steps, all.recomputed_steps);
  EXPECT_GT(all.rhs_evaluations_reverse, 0);
  EXPECT_EQ(revolve.rhs_evaluations_reverse, all.rhs_evaluations_reverse);
  EXPECT_EQ(revolve.vjp_evaluations, all.vjp_evaluations);
  constexpr Index kStages = 4;  // rk4: one f call per stage of a forward step
  EXPECT_EQ(revolve.rhs_evaluations_forward - all.rhs_evaluations_forward,
            kStages * (revolve.recomputed_steps - all.recomputed_steps));
  // The wall time includes allocating storage (the trajectory, the store).
  EXPECT_DOUBLE_EQ(all.total_seconds(), all.setup_seconds + all.forward_seconds +
                                            all.recompute_seconds + all.reverse_seconds);
}

TEST(Differentiate, AStopConditionReachesTheDriver) {
  Projectile<> shot;
  ExplicitRungeKutta stepper(shot, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 100000));
  const auto range = Objective<B>::terminal_linear(Projectile<>::range_weights());
  const Vec y0 = Projectile<>::launch_state(30.0, 0.7);
  const Vec theta = Projectile<>::default_parameters(9.81, 0.01);
  StoreAllAdjoint driver(stepper, range, {}, Projectile<>::landing());
  const auto reference = driver.run(y0, theta);
  expect_same_gradient(
      differentiate(stepper, range, y0, theta, StoreAllStrategy{}, Projectile<>::landing()),
      reference);
  expect_same_gradient(
      differentiate(stepper, range, y0, theta, CheckpointStrategy{revolve_schedule(5)},
                    Projectile<>::landing()),
      reference);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            differentiate(stepper, range, y0, theta,
                                          AdjointStrategy{BacksolveStrategy{}},
                                          Projectile<>::landing());
                          }),
                          "takes no stop condition");
}

TEST(Differentiate, ABacksolveOfAStepperWithoutATableauIsRefusedNamingTheConcept) {
  StochasticLorenz63<> lorenz;
  StochasticStepper stepper(lorenz, SdeScheme::euler_maruyama, StepControl::fixed(0.0, 0.01, 20),
                            3);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            differentiate(stepper, Objective<B>::terminal_squared_norm(),
                                          lorenz.default_initial_state(),
                                          lorenz.default_parameters(),
                                          AdjointStrategy{BacksolveStrategy{}});
                          }),
                          "rwd::ButcherTableauStepper");
}

}  // namespace
}  // namespace rwd
