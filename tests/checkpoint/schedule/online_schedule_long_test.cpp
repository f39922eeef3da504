// Long sweeps of OnlineSchedule (label `long`: ctest -L long): the bounds of online_placement.hpp
// for every run length l ≤ 10^5 and budgets c ≤ 40 (the forward phase's own cost prediction, one
// pass per c), the validated action stream for every l ≤ 2000 and c ≤ 20 and for sampled l up to
// 10^7 and c up to 100 — for both rules past β(c, 3), never_above_dynamic never above Wang, Moin &
// Iaccarino's schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "rewind/schedule/dynamic_checkpointing_schedule.hpp"
#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "support/online_ratio_bound.hpp"
#include "support/online_sweep.hpp"

namespace rwd {
namespace {

using testing::online_ratio_bound;

class OnlineLong : public ::testing::TestWithParam<OnlineRule> {};

TEST_P(OnlineLong, BoundsForEveryLengthUpTo100000AndBudgetUpTo40) {
  const OnlineRule rule = GetParam();
  for (int c = 1; c <= 40; ++c) {
    OnlinePlacement placement(c, rule);
    for (Index n = 0; n < 100000; ++n) {
      placement.decide(n);
      const Index l = n + 2;  // the shortest run that asked about y_n
      const Index advances = placement.advances_if_ended_here();
      const Index optimum = revolve_advances(l, c);
      ASSERT_GE(advances, optimum) << "l = " << l << ", c = " << c;
      ASSERT_LE(static_cast<double>(advances),
                online_ratio_bound(l, c, rule) * static_cast<double>(optimum))
          << "l = " << l << ", c = " << c;
      ASSERT_LE(static_cast<int>(placement.positions().size()), c);
    }
  }
}

// online_schedule_test.cpp's sweep for every length: the validated action stream of every run
// l ≤ 2000, c ≤ 20.
TEST_P(OnlineLong, ValidStreamsForEveryLengthUpTo2000AndBudgetUpTo20) {
  testing::sweep_online_schedule(GetParam(), 2000, 20, [](Index, int) { return true; });
}

TEST_P(OnlineLong, ValidStreamsForSampledLengthsUpTo10Million) {
  const OnlineRule rule = GetParam();
  std::mt19937_64 rng(836854);
  std::uniform_real_distribution<double> log_l(4.0, 7.0);
  std::uniform_int_distribution<int> budget(2, 100);
  for (int i = 0; i < 12; ++i) {
    const auto l = static_cast<Index>(std::pow(10.0, log_l(rng)));
    const int c = budget(rng);
    SCOPED_TRACE("l = " + std::to_string(l) + ", c = " + std::to_string(c));
    const ScheduleCost cost = simulate_online(c, l, {}, rule);
    const Index optimum = revolve_advances(l, c);
    EXPECT_EQ(cost.reverses, l);
    EXPECT_LE(cost.peak_slots, c);
    EXPECT_GE(cost.advances, optimum);
    EXPECT_LE(static_cast<double>(cost.advances),
              online_ratio_bound(l, c, rule) * static_cast<double>(optimum));
    if (rule == OnlineRule::never_above_dynamic) {
      EXPECT_LE(cost.advances, dynamic_checkpointing_advances(l, c));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothRules, OnlineLong,
                         ::testing::Values(OnlineRule::least_worst_case,
                                           OnlineRule::never_above_dynamic),
                         [](const auto& info) { return testing::online_rule_name(info.param); });

}  // namespace
}  // namespace rwd
