// StoreAllSchedule: the exact stream, valid in the simulator, counts as documented.
#include "rewind/schedule/store_all_schedule.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

TEST(StoreAllSchedule, ExactStream) {
  StoreAllSchedule schedule(3);
  const std::vector<Action> expected = {
      Action::store(0, 0), Action::advance(1), Action::store(1, 1),   Action::advance(2),
      Action::store(2, 2), Action::reverse(2), Action::free(2, 2),    Action::restore(1, 1),
      Action::reverse(1),  Action::free(1, 1), Action::restore(0, 0), Action::reverse(0),
      Action::free(0, 0),  Action::done()};
  for (const Action& a : expected) EXPECT_EQ(schedule.next(), a);
  EXPECT_EQ(schedule.next(), Action::done());
  schedule.reset();
  for (const Action& a : expected) EXPECT_EQ(schedule.next(), a);
}

TEST(StoreAllSchedule, CountsMatchTheFormulas) {
  for (Index l = 1; l <= 300; ++l) {
    StoreAllSchedule schedule(l);
    const ScheduleCost cost = simulate(schedule);
    EXPECT_EQ(cost.advances, l - 1);
    EXPECT_EQ(cost.recomputed_steps, 0);
    EXPECT_EQ(cost.stores, l);
    EXPECT_EQ(cost.restores, l - 1);
    EXPECT_EQ(cost.reverses, l);
    EXPECT_EQ(cost.frees, l);
    EXPECT_EQ(cost.peak_slots, l);
    EXPECT_EQ(cost.actions,
              5 * l - 1);  // l stores, frees, reverses; l − 1 advances, restores; done
  }
  StoreAllSchedule long_one(1000000);
  EXPECT_EQ(simulate(long_one).advances, 999999);
}

TEST(StoreAllSchedule, Describes) {
  StoreAllSchedule schedule(12);
  EXPECT_EQ(schedule.name(), "store-all");
  EXPECT_EQ(schedule.steps(), 12);
  EXPECT_EQ(schedule.slots(), 12);
}

TEST(StoreAllSchedule, RefusesBadArguments) {
  EXPECT_THROW(StoreAllSchedule(0), InvalidArgument);
  try {
    StoreAllSchedule(Index{std::numeric_limits<int>::max()} + 1);
    ADD_FAILURE() << "accepted more steps than slots can count";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("one slot per step"), std::string::npos);
  }
}

}  // namespace
}  // namespace rwd
