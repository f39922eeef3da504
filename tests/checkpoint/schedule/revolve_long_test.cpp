// Long sweeps of RevolveSchedule (label `long`: ctest -L long): exact optimality over a larger
// grid, against the brute-force recursion, and on random horizons up to 10^8 and budgets up to
// 10^4. Takes a few minutes on one core.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

void check(Index l, int c) {
  RevolveSchedule schedule(l, c);
  const ScheduleCost cost = simulate(schedule);
  ASSERT_EQ(cost.advances, revolve_advances(l, c)) << "l = " << l << ", c = " << c;
  ASSERT_EQ(cost.reverses, l);
  ASSERT_EQ(cost.peak_slots, std::min<Index>(c, std::max<Index>(l - 1, 1)));
}

TEST(RevolveLong, EveryHorizonUpTo3000AndBudgetUpTo64) {
  for (int c = 1; c <= 64; ++c)
    for (Index l = 1; l <= 3000; ++l) check(l, c);
}

TEST(RevolveLong, ClosedFormEqualsBruteForce) {
  const Index max_l = 2000, max_c = 20;
  std::vector<std::vector<Index>> f(max_l + 1, std::vector<Index>(max_c + 1, 0));
  for (Index c = 1; c <= max_c; ++c)
    for (Index l = 2; l <= max_l; ++l) {
      Index best = (l - 1) + f[l - 1][c];
      if (c >= 2)
        for (Index j = 1; j < l; ++j) best = std::min(best, j + f[l - j][c - 1] + f[j][c]);
      f[l][c] = best;
      ASSERT_EQ(revolve_advances(l, c), best) << l << " " << c;
    }
}

TEST(RevolveLong, RandomHorizonsUpTo1e8) {
  std::mt19937_64 rng(799);
  std::uniform_real_distribution<double> log_l(4.0, 8.0);
  std::uniform_real_distribution<double> log_c(0.0, 2.5);
  for (int i = 0; i < 24; ++i) {
    const auto l = static_cast<Index>(std::pow(10.0, log_l(rng)));
    const auto c = static_cast<int>(std::pow(10.0, log_c(rng)));
    SCOPED_TRACE("l = " + std::to_string(l) + ", c = " + std::to_string(c));
    check(l, c);
  }
  check(100000000, 20);
  check(1000000, 1);
  check(3000000, 10000);
  check(65536, 65535);
}

}  // namespace
}  // namespace rwd
