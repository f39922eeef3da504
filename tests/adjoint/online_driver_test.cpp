// Runs of unknown length through the checkpointed driver: adaptive steps and stop conditions run
// the online schedule (no counting sweep) and give bitwise the store-all gradient over the same
// accepted steps, for every budget; other planners count first and agree too; the recomputation
// is the online schedule's simulated cost; drift is zero and the monitor's samples stay bounded.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/rewind.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

bool same_bits(const Vec& a, const Vec& b) {
  if (a.size() != b.size()) return false;
  for (Eigen::Index i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;
  return true;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

TEST(OnlineDriver, AdaptiveRunIsBitwiseStoreAllWithoutACountingSweep) {
  Lorenz63<> problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::dormand_prince(),
                             StepControl::adaptive(0.0, 3.0, 1e-7, 1e-9));
  const auto objective = Objective<B>::terminal_squared_norm();
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  StoreAllAdjoint reference(stepper, objective);
  const auto expected = reference.run(y0, theta);
  const Index l = expected.summary.steps;
  ASSERT_GT(l, 100);
  for (int c : {1, 2, 3, 5, 8, 20, 1000}) {
    SCOPED_TRACE("c = " + std::to_string(c));
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.max_fingerprints = 16;  // the monitor thins its samples as the run grows
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto result = driver.run(y0, theta, revolve_schedule(c));
    EXPECT_EQ(result.counting_steps, 0);
    EXPECT_EQ(result.summary.steps, l);
    EXPECT_EQ(result.summary.schedule, OnlineSchedule(c).name());
    EXPECT_TRUE(same_bits(result.loss, expected.loss));
    EXPECT_TRUE(same_bits(result.grad_y0, expected.grad_y0));
    EXPECT_TRUE(same_bits(result.grad_theta, expected.grad_theta));
    EXPECT_TRUE(same_bits(result.y_final, expected.y_final));
    EXPECT_EQ(result.summary.recomputed_steps, simulate_online(c, l).advances);
    EXPECT_TRUE(result.drift.bitwise_identical());
    if (c < l) {
      EXPECT_GT(result.drift.replayed_steps_checked, 0);
    }
    EXPECT_LE(result.drift.sampling_stride * 16, 2 * l + 32);
  }
}

TEST(OnlineDriver, OtherPlannersCountFirstAndAgree) {
  Lorenz63<> problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::tsitouras(),
                             StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9));
  const auto objective = Objective<B>::terminal_squared_norm();
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  StoreAllAdjoint reference(stepper, objective);
  const auto expected = reference.run(y0, theta);
  CheckpointedAdjoint driver(stepper, objective);
  const auto counted = driver.run(y0, theta, uniform_schedule(7));
  EXPECT_EQ(counted.counting_steps, expected.summary.steps);
  EXPECT_TRUE(same_bits(counted.grad_theta, expected.grad_theta));
  const auto online = driver.run(y0, theta, revolve_schedule(4));
  EXPECT_EQ(online.counting_steps, 0);
  EXPECT_TRUE(same_bits(online.grad_theta, counted.grad_theta));
}

struct Flight {
  Projectile<> shot;
  ExplicitRungeKutta<Projectile<>> stepper{shot, ButcherTableau::rk4(),
                                           StepControl::fixed(0.0, 0.005, 1000000)};
  Objective<B> objective = Objective<B>::terminal_linear(Projectile<>::range_weights());
  Vec y0 = Projectile<>::launch_state(40.0, 0.9);
  Vec theta = Projectile<>::default_parameters(9.81, 0.004);
};

TEST(OnlineDriver, EventStoppedRunIsBitwiseStoreAllForEveryScheduleAndBudget) {
  Flight f;
  StoreAllAdjoint reference(f.stepper, f.objective, {}, Projectile<>::landing());
  const auto expected = reference.run(f.y0, f.theta);
  const Index l = expected.summary.steps;
  ASSERT_GT(l, 500);
  std::vector<std::pair<std::string, Planner>> schedules = {
      {"online 2", revolve_schedule(2)},   {"online 6", revolve_schedule(6)},
      {"online 40", revolve_schedule(40)}, {"uniform", uniform_schedule(50)},
      {"store-all", store_all_schedule()},
  };
  for (const auto& [name, planner] : schedules) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(f.stepper, f.objective, options, Projectile<>::landing());
    const auto result = driver.run(f.y0, f.theta, planner);
    EXPECT_EQ(result.summary.steps, l);
    EXPECT_EQ(result.counting_steps, name.rfind("online", 0) == 0 ? 0 : l);
    EXPECT_TRUE(same_bits(result.loss, expected.loss));
    EXPECT_TRUE(same_bits(result.grad_y0, expected.grad_y0));
    EXPECT_TRUE(same_bits(result.grad_theta, expected.grad_theta));
    EXPECT_TRUE(same_bits(result.summary.t_final, expected.summary.t_final));
  }
}

TEST(OnlineDriver, ARunThatNeverStopsEndsAtTheCapWithAnError) {
  Flight f;
  ExplicitRungeKutta<Projectile<>> short_run{f.shot, ButcherTableau::rk4(),
                                             StepControl::fixed(0.0, 0.005, 300)};
  CheckpointedAdjoint driver(short_run, f.objective, {}, Projectile<>::landing());
  try {
    driver.run(f.y0, f.theta, revolve_schedule(5));
    FAIL() << "expected an error";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("did not hold"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rwd
