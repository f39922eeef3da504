// Long sweeps of MultiLevelSchedule (label `long`: ctest -L long): the recursive family against
// all action sequences for l = 8; the planner against the reference DP for every l ≤ 300 on more
// budgets; how far the grid and super-step plans stay from the optimum up to l = 1000; random
// horizons up to 10^5 against memory revolve and uniform disk snapshots; l = 10^7 simulated.
// Takes a few minutes on one core.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "multilevel_checks.hpp"
#include "multilevel_reference.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

using test::check_plan;
using test::cost_model;

std::vector<CostModel> grid() {
  return {cost_model(1.0, 20.0, 20.0),         cost_model(2.0, 1.0, 1.0),
          cost_model(0.0, 0.05, 0.05),         cost_model(2.0, 5.0, 0.5),
          cost_model(1.0, 0.5, 8.0, 0.2, 0.1), cost_model(1.0, 3.0, 3.0, 1.0, 1.0)};
}

TEST(MultiLevelLong, RecursiveFamilyIsOptimalForEightSteps) {
  for (const CostModel& costs : grid())
    for (const auto& [m, d] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {1, 4}, {3, 2}}) {
      test::ReferenceTwoLevelDP dp(8, m, d, costs);
      const double all = test::exhaustive_two_level(8, m, d, costs);
      ASSERT_NEAR(dp.optimum(8), all, 1e-9 * all) << "m = " << m << ", d = " << d;
      MultiLevelSchedule s(8, m, d, costs);
      check_plan(s, m, d);
      ASSERT_NEAR(predicted_time(simulate(s), costs), all, 1e-9 * all);
    }
}

TEST(MultiLevelLong, OptimalForEveryHorizonUpTo300) {
  for (const CostModel& costs : grid())
    for (const auto& [m, d] : std::vector<std::pair<int, int>>{{1, 30}, {6, 6}, {3, 2}, {2, 20}}) {
      test::ReferenceTwoLevelDP dp(300, m, d, costs);
      for (Index l = 1; l <= 300; ++l) {
        MultiLevelSchedule s(l, m, d, costs);
        if (!s.exact()) continue;
        check_plan(s, m, d);
        const double t = s.predicted_time(), optimum = dp.optimum(l);
        ASSERT_NEAR(t, optimum, 1e-9 * optimum) << "l = " << l << ", m = " << m << ", d = " << d;
      }
    }
}

TEST(MultiLevelLong, BeyondTheTableStaysCloseToTheOptimum) {
  double worst = 0.0;
  for (const CostModel& costs :
       {cost_model(2.0, 2.0, 2.0), cost_model(1.0, 0.1, 0.1), cost_model(1.0, 20.0, 20.0)})
    for (const auto& [m, d] : std::vector<std::pair<int, int>>{{4, 20}, {4, 100}, {8, 30}}) {
      test::ReferenceTwoLevelDP dp(1000, m, d, costs);
      for (const Index l : {Index{400}, Index{700}, Index{1000}}) {
        MultiLevelSchedule s(l, m, d, costs);
        check_plan(s, m, d);
        const double gap = s.predicted_time() / dp.optimum(l) - 1.0;
        std::printf("l = %4lld, m = %d, d = %3d, w_d = r_d = %4.1f: %-11s k = %2lld  +%.2f %%\n",
                    static_cast<long long>(l), m, d, costs.disk_write_time,
                    s.exact()                                               ? "exact"
                    : s.plan().method == detail::TwoLevelPlan::Method::grid ? "grid"
                                                                            : "super-steps",
                    static_cast<long long>(s.super_step()), 100.0 * gap);
        EXPECT_GE(gap, -1e-12);
        EXPECT_LE(gap, 0.08) << "l = " << l << ", m = " << m << ", d = " << d;
        worst = std::max(worst, gap);
      }
    }
  std::printf("worst: +%.2f %%\n", 100.0 * worst);
}

TEST(MultiLevelLong, RandomHorizonsBeatTheSimpleStrategies) {
  std::mt19937_64 rng(2016);
  std::uniform_int_distribution<Index> steps(200, 100000);
  std::uniform_int_distribution<int> memory(1, 8), disk(1, 400);
  std::uniform_real_distribution<double> cost(-2.0, 2.0);  // log10 of the disk times
  for (int i = 0; i < 40; ++i) {
    const Index l = steps(rng);
    const int m = memory(rng), d = disk(rng);
    const CostModel costs = cost_model(2.0, std::pow(10.0, cost(rng)), std::pow(10.0, cost(rng)));
    SCOPED_TRACE("l = " + std::to_string(l) + ", m = " + std::to_string(m) +
                 ", d = " + std::to_string(d) + ", w_d = " + std::to_string(costs.disk_write_time) +
                 ", r_d = " + std::to_string(costs.disk_read_time));
    MultiLevelSchedule s(l, m, d, costs);
    check_plan(s, m, d);
    RevolveSchedule revolve(l, m);
    EXPECT_LE(s.predicted_time(), predicted_time(simulate(revolve), costs));
    if (d >= 2) {
      test::ActionListSchedule uniform = test::uniform_disk_schedule(l, m, d, (l - 1) / d + 1);
      EXPECT_LE(s.predicted_time(), predicted_time(simulate(uniform), costs) * (1.0 + 1e-12));
    }
  }
}

TEST(MultiLevelLong, TenMillionSteps) {
  const Index l = 10000000;
  const CostModel costs = cost_model(2.0, 2.0, 2.0);
  const auto start = std::chrono::steady_clock::now();
  MultiLevelSchedule s(l, 4, 1000, costs);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);
  const ScheduleCost cost = check_plan(s, 4, 1000);
  std::printf("l = 10^7, m = 4, d = 1000: planned in %.3f s, k = %lld, %.4f forward runs\n",
              seconds, static_cast<long long>(s.super_step()),
              predicted_time(cost, costs) / static_cast<double>(l));
  MultiLevelSchedule huge(Index{1} << 40, 16, 100000, costs);  // planned, not simulated
  EXPECT_GT(huge.predicted_time(), 0.0);
}

}  // namespace
}  // namespace rwd
