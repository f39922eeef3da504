// Long sweeps of OnlineSchedule (label `long`: ctest -L long): the bounds of online_placement.hpp
// for every run length l ≤ 10^5 and budgets c ≤ 40 (the forward phase's own cost prediction, one
// pass per c), and the validated action stream for sampled l up to 10^7 and c up to 100.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

// As in online_schedule_test.cpp.
double ratio_bound(Index l, int c) {
  if (l <= revolve_beta(c, 2)) return 1.0;
  // 15/14 and 22/21 exactly, just above so that the double products do not round below.
  if (l <= revolve_beta(c, 3)) return c == 2 ? 1.0715 : c == 3 ? 1.0477 : 1.04;
  return c == 2 ? 1.14 : c == 3 ? 1.09 : 1.06;
}

TEST(OnlineLong, BoundsForEveryLengthUpTo100000AndBudgetUpTo40) {
  for (int c = 1; c <= 40; ++c) {
    OnlinePlacement placement(c);
    for (Index n = 0; n < 100000; ++n) {
      placement.decide(n);
      const Index l = n + 2;  // the shortest run that asked about y_n
      const Index advances = placement.advances_if_ended_here();
      const Index optimum = revolve_advances(l, c);
      ASSERT_GE(advances, optimum) << "l = " << l << ", c = " << c;
      ASSERT_LE(static_cast<double>(advances), ratio_bound(l, c) * static_cast<double>(optimum))
          << "l = " << l << ", c = " << c;
      ASSERT_LE(static_cast<int>(placement.positions().size()), c);
    }
  }
}

TEST(OnlineLong, ValidStreamsForSampledLengthsUpTo10Million) {
  std::mt19937_64 rng(836854);
  std::uniform_real_distribution<double> log_l(4.0, 7.0);
  std::uniform_int_distribution<int> budget(2, 100);
  for (int i = 0; i < 12; ++i) {
    const auto l = static_cast<Index>(std::pow(10.0, log_l(rng)));
    const int c = budget(rng);
    SCOPED_TRACE("l = " + std::to_string(l) + ", c = " + std::to_string(c));
    const ScheduleCost cost = simulate_online(c, l);
    const Index optimum = revolve_advances(l, c);
    EXPECT_EQ(cost.reverses, l);
    EXPECT_LE(cost.peak_slots, c);
    EXPECT_GE(cost.advances, optimum);
    EXPECT_LE(static_cast<double>(cost.advances), ratio_bound(l, c) * static_cast<double>(optimum));
  }
}

}  // namespace
}  // namespace rwd
