// OnlineSchedule: valid in the simulator for run lengths l ≤ 2000 (every one to 400, then sampled)
// and every budget c ≤ 20, with its advances against offline revolve's p(l, c) region by region
// (the worst ratios are printed) and equal to what OnlinePlacement predicts; valid with at most c
// slots for random stop points up to 10^6; the action stream's shape (forward phase, end_at,
// reverse phase, reset, clone); bad input refused. (Every length to 2000, and larger budgets:
// online_schedule_long_test.cpp.)
#include "rewind/schedule/online_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "support/online_ratio_bound.hpp"
#include "support/online_sweep.hpp"

namespace rwd {
namespace {

using testing::online_ratio_bound;

class OnlineScheduleRules : public ::testing::TestWithParam<OnlineRule> {};

// Every length up to 400, then every 7th and those around β(c, 2) and β(c, 3), where the regions
// of online_ratio_bound.hpp meet (every length to 2000: online_schedule_long_test.cpp).
TEST_P(OnlineScheduleRules, LengthsUpTo2000AndEveryBudgetUpTo20) {
  testing::sweep_online_schedule(GetParam(), 2000, 20, [](Index l, int c) {
    const Index beta2 = revolve_beta(c, 2), beta3 = revolve_beta(c, 3);
    return l <= 400 || l % 7 == 0 || l == 2000 || (l >= beta2 - 1 && l <= beta2 + 1) ||
           (l >= beta3 - 1 && l <= beta3 + 1);
  });
}

INSTANTIATE_TEST_SUITE_P(BothRules, OnlineScheduleRules,
                         ::testing::Values(OnlineRule::least_worst_case,
                                           OnlineRule::never_above_dynamic),
                         [](const auto& info) { return testing::online_rule_name(info.param); });

TEST(OnlineSchedule, OneSnapshotRecomputesFromTheStart) {
  for (Index l = 1; l <= 300; ++l) EXPECT_EQ(simulate_online(1, l).advances, l * (l - 1) / 2);
}

TEST(OnlineSchedule, RandomStopPointsUpToAMillion) {
  std::mt19937_64 rng(20100202);
  std::uniform_real_distribution<double> log_l(3.0, 6.0);
  for (const int c : {2, 5, 10, 20, 64}) {
    for (int i = 0; i < 2; ++i) {
      const auto l = static_cast<Index>(std::pow(10.0, log_l(rng)));
      SCOPED_TRACE("l = " + std::to_string(l) + ", c = " + std::to_string(c));
      const ScheduleCost cost = simulate_online(c, l);
      const Index optimum = revolve_advances(l, c);
      EXPECT_EQ(cost.reverses, l);
      EXPECT_EQ(cost.first_sweep_advances, l - 1);
      EXPECT_LE(cost.peak_slots, c);
      EXPECT_LE(cost.memory_slots_used, c);
      EXPECT_GE(cost.advances, optimum);
      EXPECT_LE(static_cast<double>(cost.advances),
                online_ratio_bound(l, c) * static_cast<double>(optimum));
    }
  }
}

// The forward phase gives only stores, frees and advances one step at a time, never touches a
// slot ≥ c, and knows no length; end_at turns it into the reverse phase.
TEST(OnlineSchedule, ForwardPhaseThenReversePhase) {
  const int c = 4;
  OnlineSchedule schedule(c);
  EXPECT_EQ(schedule.name(), "online(c = 4)");
  EXPECT_EQ(schedule.slots(), c);
  Index current = 0;
  for (;;) {
    ASSERT_EQ(schedule.forward_step(), current);
    if (current + 1 == 77) break;  // the driver found y_77 final before asking about y_76
    const Action a = schedule.next();
    EXPECT_EQ(schedule.steps(), -1);
    EXPECT_FALSE(schedule.ended());
    if (a.kind == ActionKind::advance) {
      ASSERT_EQ(a.step, current + 1);
      current = a.step;
      continue;
    }
    ASSERT_TRUE(a.kind == ActionKind::store || a.kind == ActionKind::free) << a.to_string();
    ASSERT_GE(a.slot, 0);
    ASSERT_LT(a.slot, c);
    if (a.kind == ActionKind::store) {
      ASSERT_EQ(a.step, current);
    }
  }
  schedule.end_at(77);
  EXPECT_TRUE(schedule.ended());
  EXPECT_EQ(schedule.steps(), 77);
  EXPECT_EQ(schedule.next(), Action::reverse(76));  // y_76 is current: no recomputation first
  Action a = schedule.next();
  while (a.kind != ActionKind::done) a = schedule.next();
  EXPECT_EQ(schedule.next(), Action::done());  // done again

  schedule.reset();
  EXPECT_FALSE(schedule.ended());
  EXPECT_EQ(schedule.steps(), -1);
  EXPECT_EQ(schedule.next(), Action::store(0, 0));
}

// reset() and clone() start the same stream again.
TEST(OnlineSchedule, ResetAndCloneRepeatTheStream) {
  const auto record = [](Schedule& s, OnlineSchedule& online, Index l) {
    std::vector<Action> actions;
    for (;;) {
      if (!online.ended() && online.forward_step() + 1 == l) online.end_at(l);
      const Action a = s.next();
      if (a.kind == ActionKind::done) break;
      actions.push_back(a);
    }
    return actions;
  };
  OnlineSchedule schedule(5);
  const std::vector<Action> first = record(schedule, schedule, 500);
  schedule.reset();
  EXPECT_EQ(record(schedule, schedule, 500), first);
  std::unique_ptr<Schedule> copy = schedule.clone();
  auto& online = dynamic_cast<OnlineSchedule&>(*copy);
  EXPECT_EQ(record(online, online, 500), first);
}

TEST(OnlineSchedule, RefusesBadInput) {
  EXPECT_THROW(OnlineSchedule(0), InvalidArgument);
  EXPECT_THROW(OnlineSchedule(-3), InvalidArgument);
  EXPECT_THROW(simulate_online(0, 10), InvalidArgument);
  EXPECT_THROW(simulate_online(3, 0), InvalidArgument);

  const auto message_of = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  OnlineSchedule schedule(3);
  // Only the next step can end the run.
  EXPECT_NE(message_of([&] { schedule.end_at(2); }).find("can only end at step 1"),
            std::string::npos)
      << message_of([&] { schedule.end_at(2); });
  // Once the actions for y_0 began, the run is known to go on past y_1.
  EXPECT_EQ(schedule.next(), Action::store(0, 0));
  EXPECT_NE(message_of([&] { schedule.end_at(1); }).find("after the actions for y_0 began"),
            std::string::npos)
      << message_of([&] { schedule.end_at(1); });
  EXPECT_EQ(schedule.next(), Action::advance(1));
  EXPECT_NE(message_of([&] { schedule.end_at(3); }).find("can only end at step 2"),
            std::string::npos)
      << message_of([&] { schedule.end_at(3); });
  EXPECT_FALSE(schedule.ended());
  schedule.end_at(2);
  EXPECT_NE(message_of([&] { schedule.end_at(2); }).find("called twice"), std::string::npos);
  // A run of one step: ended before any action, y_0 current, nothing stored.
  OnlineSchedule one(3);
  one.end_at(1);
  EXPECT_EQ(one.next(), Action::reverse(0));
  EXPECT_EQ(one.next(), Action::done());

  OnlinePlacement placement(2);
  EXPECT_THROW(placement.decide(1), InvalidArgument);  // steps come one at a time from 0
  EXPECT_THROW(placement.advances_if_ended_here(), InvalidArgument);
}

}  // namespace
}  // namespace rwd
