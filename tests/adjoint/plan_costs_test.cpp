// rwd::measure_plan_costs: a C++ program gets the costs the rewind tool plans with — what the
// request's family needs measured against the stepper, given costs over them — and nothing is
// measured when the request weighs nothing or every cost it weighs is given.
#include "rewind/adjoint/plan_costs.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

TEST(PlanCosts, MeasuresWhatTheFamilyWeighsAndKeepsWhatIsGiven) {
  Lorenz96<> problem(256);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.001, 50));
  test::ScratchDirectory scratch("rewind-plan-costs");
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;

  // Revolve weighs nothing: no measurement, the request as it was.
  const PlanCosts revolve =
      measure_plan_costs(stepper, y0, theta, PlanRequest::revolve(8), GivenCosts{});
  EXPECT_FALSE(revolve.measured.any());
  EXPECT_FALSE(revolve.seconds);
  EXPECT_EQ(revolve.request.budget, 8);

  // Two-level with the disk's read given: the disk measured, the write from it, the read given.
  GivenCosts read;
  read.disk_read = 3.0;
  const PlanCosts two = measure_plan_costs(stepper, y0, theta, PlanRequest::two_level(2, 6, costs),
                                           read, scratch.path());
  ASSERT_TRUE(two.seconds);
  ASSERT_TRUE(two.seconds->disk);
  EXPECT_FALSE(two.seconds->levels);
  EXPECT_TRUE(two.measured.disk);
  EXPECT_EQ(two.request.costs.disk_write_time,
            two.seconds->disk->write_seconds / two.seconds->step_seconds);
  EXPECT_EQ(two.request.costs.disk_read_time, 3.0);
  EXPECT_EQ(two.request.costs.adjoint_cost_factor, 1.5);
  // The plan is the one of those costs.
  const CheckpointPlan plan = plan_checkpoints(two.request, 200);
  EXPECT_EQ(plan.costs.disk_read_time, 3.0);

  // Both given: nothing measured.
  GivenCosts both = read;
  both.disk_write = 2.0;
  const PlanCosts given =
      measure_plan_costs(stepper, y0, theta, PlanRequest::two_level(2, 6, costs), both);
  EXPECT_FALSE(given.seconds);
  EXPECT_EQ(given.request.costs.disk_write_time, 2.0);
  EXPECT_EQ(given.request.costs.disk_read_time, 3.0);

  // The stage chooser: the memory level's copies, in forward steps.
  const PlanCosts stages = measure_plan_costs(stepper, y0, theta, PlanRequest::revolve(8),
                                              GivenCosts{}, {}, /*stage_aware=*/true);
  ASSERT_TRUE(stages.seconds && stages.seconds->levels);
  EXPECT_EQ(stages.request.costs.write_time,
            stages.seconds->levels->device_write_seconds / stages.seconds->step_seconds);
  EXPECT_EQ(stages.request.costs.host_write_time, 0.0);  // not weighed: as it was
}

}  // namespace
}  // namespace rwd
