// rwd::compare_online_with_offline: the online schedule's simulated cost for a run that ends at
// l, against offline revolve's closed forms, and the region of its guarantees.
#include <gtest/gtest.h>

#include "rewind/error.hpp"
#include "rewind/schedule/online_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd {
namespace {

TEST(OnlineComparison, CountsAreTheSimulationAndTheClosedForms) {
  const OnlineComparison c = compare_online_with_offline(10, 951);
  EXPECT_EQ(c.name, OnlineSchedule(10).name());
  const ScheduleCost simulated = simulate_online(10, 951);
  EXPECT_EQ(c.cost.steps, 951);
  EXPECT_EQ(c.cost.advances, simulated.advances);
  EXPECT_EQ(c.cost.stores, simulated.stores);
  EXPECT_EQ(c.offline_advances, revolve_advances(951, 10));
  EXPECT_EQ(c.offline_repetitions, revolve_repetitions(951, 10));
  EXPECT_EQ(c.beta2, revolve_beta(10, 2));
  EXPECT_EQ(c.beta3, revolve_beta(10, 3));
  // Never better than revolve, which knows l.
  EXPECT_GE(c.cost.advances, c.offline_advances);
  EXPECT_DOUBLE_EQ(c.ratio_to_offline(),
                   static_cast<double>(c.cost.advances) / static_cast<double>(c.offline_advances));
  EXPECT_DOUBLE_EQ(c.recompute_ratio(), (951.0 + static_cast<double>(c.cost.advances)) / 951.0);
  EXPECT_DOUBLE_EQ(c.predicted_time_ratio(1.5),
                   (static_cast<double>(c.cost.advances) + 951.0 * 2.5) / 951.0);
  // A whole-plan view of the same run agrees.
  EXPECT_EQ(plan_online(10, 951).advances, c.cost.advances);
}

TEST(OnlineComparison, RegionsFollowBeta) {
  // β(3, 2) = C(5, 3) = 10, β(3, 3) = C(6, 3) = 20.
  EXPECT_EQ(compare_online_with_offline(3, 10).region, OnlineRegion::up_to_beta2);
  EXPECT_EQ(compare_online_with_offline(3, 11).region, OnlineRegion::up_to_beta3);
  EXPECT_EQ(compare_online_with_offline(3, 20).region, OnlineRegion::up_to_beta3);
  EXPECT_EQ(compare_online_with_offline(3, 21).region, OnlineRegion::beyond_beta3);
  EXPECT_STREQ(online_region_name(OnlineRegion::up_to_beta2), "r <= 2");
  EXPECT_STREQ(online_region_name(OnlineRegion::up_to_beta3), "r = 3");
  EXPECT_STREQ(online_region_name(OnlineRegion::beyond_beta3), "r > 3");
  // Up to β(c, 2) the online schedule recomputes as little as revolve.
  const OnlineComparison early = compare_online_with_offline(3, 10);
  EXPECT_EQ(early.cost.advances, early.offline_advances);
  EXPECT_DOUBLE_EQ(early.ratio_to_offline(), 1.0);
}

TEST(OnlineComparison, RefusesBadInput) {
  EXPECT_THROW(compare_online_with_offline(0, 10), InvalidArgument);
  EXPECT_THROW(compare_online_with_offline(3, 0), InvalidArgument);
}

}  // namespace
}  // namespace rwd
