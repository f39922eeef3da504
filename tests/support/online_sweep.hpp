// The online schedule run through the simulator for every budget c ≤ max_c and the run lengths
// l ≤ max_l that `checked(l, c)` picks: each run valid, its advances those OnlinePlacement
// predicts, between offline revolve's p(l, c) and the bound of online_ratio_bound.hpp, equal to
// p(l, c) where the online schedule is optimal; the worst ratio of each region printed. Shared by
// online_schedule_test.cpp (sampled lengths) and online_schedule_long_test.cpp (every length).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "support/online_ratio_bound.hpp"

namespace rwd::testing {

// The worst ratio advances / p(l, c) seen in a region, and where.
struct WorstOnlineRatio {
  double ratio = 1.0;
  Index excess = 0;  // advances − p(l, c) at its largest
  Index l = 0;
  int c = 0;
  void see(Index advances, Index optimum, Index steps, int snapshots) {
    const double r =
        static_cast<double>(advances) / static_cast<double>(std::max<Index>(optimum, 1));
    excess = std::max(excess, advances - optimum);
    if (r > ratio) {
      ratio = r;
      l = steps;
      c = snapshots;
    }
  }
  void print(const char* region) const {
    std::printf("online/offline worst ratio %-28s %.4f at l = %lld, c = %d; most extra %lld\n",
                region, ratio, static_cast<long long>(l), c, static_cast<long long>(excess));
  }
};

// See the top. Fails the calling test (ASSERT) at the first run that breaks a rule.
template <class Checked>
void sweep_online_schedule(OnlineRule rule, Index max_l, int max_c, Checked&& checked) {
  WorstOnlineRatio r2, r3, beyond;
  for (int c = 1; c <= max_c; ++c) {
    const Index beta2 = revolve_beta(c, 2), beta3 = revolve_beta(c, 3);
    OnlinePlacement placement(c, rule);  // the forward phase alone, one step per l
    for (Index l = 1; l <= max_l; ++l) {
      if (l >= 2) placement.decide(l - 2);  // the run ending at l asked about y_0 … y_{l−2}
      if (!checked(l, c)) continue;
      const ScheduleCost cost = simulate_online(c, l, {}, rule);  // throws on a broken rule
      const Index optimum = revolve_advances(l, c);
      if (l >= 2) {
        ASSERT_EQ(cost.advances, placement.advances_if_ended_here())
            << "l = " << l << ", c = " << c;
      }
      ASSERT_GE(cost.advances, optimum) << "l = " << l << ", c = " << c;
      ASSERT_LE(static_cast<double>(cost.advances),
                online_ratio_bound(l, c, rule) * static_cast<double>(optimum))
          << "l = " << l << ", c = " << c << ": " << cost.advances
          << " advances, p(l, c) = " << optimum;
      if (l <= beta2 || l == beta3) {  // offline revolve's optimum, not knowing l
        ASSERT_EQ(cost.advances, optimum) << "l = " << l << ", c = " << c;
      }
      if (l <= static_cast<Index>(c) + 1) {  // it stores all and recomputes nothing
        ASSERT_EQ(cost.advances, l - 1);
      }
      ASSERT_EQ(cost.reverses, l);
      ASSERT_EQ(cost.first_sweep_advances, l - 1);
      ASSERT_LE(cost.peak_slots, c);
      ASSERT_EQ(cost.stores, cost.frees);
      (l <= beta2 ? r2 : l <= beta3 ? r3 : beyond).see(cost.advances, optimum, l, c);
    }
  }
  r2.print("l <= beta(c,2):");
  r3.print("beta(c,2) < l <= beta(c,3):");
  beyond.print("beta(c,3) < l:");
}

}  // namespace rwd::testing
