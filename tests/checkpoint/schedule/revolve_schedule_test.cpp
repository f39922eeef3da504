// RevolveSchedule: valid in the simulator and exactly Griewank–Walther-optimal for every
// l ≤ 1000 and c ≤ 30, for random horizons up to 10^7, at the limits c = 1 and c ≥ l, with O(1)
// set-up for l = 10^8 and no wrapping near l = 2^62. (Longer sweeps: revolve_long_test.cpp.)
#include "rewind/schedule/revolve_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

// Simulates and checks the cost against the closed form; returns the cost.
ScheduleCost check_optimal(Index l, int c) {
  RevolveSchedule schedule(l, c);
  const ScheduleCost cost = simulate(schedule);
  EXPECT_EQ(cost.advances, revolve_advances(l, c)) << "l = " << l << ", c = " << c;
  EXPECT_EQ(cost.reverses, l);
  EXPECT_EQ(cost.first_sweep_advances, l - 1);
  EXPECT_EQ(cost.recomputed_steps, cost.advances - (l - 1));
  EXPECT_EQ(cost.restores, l - 1);  // every reverse but the first starts from a snapshot
  EXPECT_EQ(cost.stores, cost.frees);
  // It uses the whole budget, but never more, and never more than useful (l − 1 for l ≥ 2).
  EXPECT_EQ(cost.peak_slots, std::min<Index>(c, std::max<Index>(l - 1, 1)))
      << "l = " << l << ", c = " << c;
  return cost;
}

TEST(RevolveSchedule, OptimalForEveryHorizonUpTo1000AndBudgetUpTo30) {
  for (int c = 1; c <= 30; ++c)
    for (Index l = 1; l <= 1000; ++l) {
      RevolveSchedule schedule(l, c);
      const ScheduleCost cost = simulate(schedule);  // throws on the first broken rule
      ASSERT_EQ(cost.advances, revolve_advances(l, c)) << "l = " << l << ", c = " << c;
      ASSERT_EQ(cost.peak_slots, std::min<Index>(c, std::max<Index>(l - 1, 1)))
          << "l = " << l << ", c = " << c;
    }
}

TEST(RevolveSchedule, OptimalForRandomLongHorizons) {
  std::mt19937_64 rng(20000101);
  std::uniform_real_distribution<double> log_l(3.0, 7.0);
  std::uniform_int_distribution<int> budget(2, 100);
  for (int i = 0; i < 6; ++i) {
    const auto l = static_cast<Index>(std::pow(10.0, log_l(rng)));
    const int c = budget(rng);
    SCOPED_TRACE("l = " + std::to_string(l) + ", c = " + std::to_string(c));
    check_optimal(l, c);
  }
  check_optimal(10000000, 50);
  check_optimal(9999991, 3);
}

TEST(RevolveSchedule, TinyStreamsExactly) {
  // l = 1: store y_0, reverse, free, done.
  RevolveSchedule one(1, 5);
  EXPECT_EQ(one.next(), Action::store(0, 0));
  EXPECT_EQ(one.next(), Action::reverse(0));
  EXPECT_EQ(one.next(), Action::free(0, 0));
  EXPECT_EQ(one.next(), Action::done());
  EXPECT_EQ(one.next(), Action::done());  // done stays done

  // l = 3, c = 1: recompute from y_0 for every step.
  RevolveSchedule single(3, 1);
  const std::vector<Action> expected = {
      Action::store(0, 0), Action::advance(2), Action::reverse(2),    Action::restore(0, 0),
      Action::advance(1),  Action::reverse(1), Action::restore(0, 0), Action::reverse(0),
      Action::free(0, 0),  Action::done()};
  for (const Action& a : expected) EXPECT_EQ(single.next(), a);
}

TEST(RevolveSchedule, LimitsOfTheBudget) {
  for (Index l : {2, 3, 10, 77, 500}) {
    // c = 1: quadratic, l(l − 1)/2 advances, one slot.
    const ScheduleCost one = check_optimal(l, 1);
    EXPECT_EQ(one.advances, l * (l - 1) / 2);
    EXPECT_EQ(one.stores, 1);
    // c ≥ l − 1: store-all behaviour, nothing recomputed, l − 1 slots at most.
    for (Index c : {l - 1, l, l + 1, 10 * l}) {
      if (c < 1) continue;
      const ScheduleCost all = check_optimal(l, static_cast<int>(c));
      EXPECT_EQ(all.advances, l - 1);
      EXPECT_EQ(all.recomputed_steps, 0);
      EXPECT_EQ(all.peak_slots, l - 1);
    }
  }
  // A budget far above l allocates nothing in proportion to c.
  check_optimal(1000, std::numeric_limits<int>::max());
}

TEST(RevolveSchedule, ResetReplaysTheSameStream) {
  RevolveSchedule schedule(500, 7);
  std::vector<Action> first;
  for (Action a = schedule.next(); a.kind != ActionKind::done; a = schedule.next())
    first.push_back(a);
  schedule.reset();
  for (const Action& a : first) ASSERT_EQ(schedule.next(), a);
  EXPECT_EQ(schedule.next(), Action::done());
  // A copy continues independently.
  schedule.reset();
  schedule.next();
  RevolveSchedule copy = schedule;
  EXPECT_EQ(copy.next(), schedule.next());
}

TEST(RevolveSchedule, StartsInstantlyOnAVeryLongHorizon) {
  // l = 10^8, c = 20: set-up is O(c log l), not O(l). Generous bound: this is not a benchmark.
  const auto start = std::chrono::steady_clock::now();
  RevolveSchedule schedule(100000000, 20);
  ScheduleValidator validator(100000000, 20);
  for (int i = 0; i < 1000; ++i) validator.apply(schedule.next());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0);
  EXPECT_LE(validator.slots_in_use(), 20);
  EXPECT_EQ(schedule.repetitions(), revolve_repetitions(100000000, 20));
}

TEST(RevolveSchedule, NoWrappingNearTwoToThe62) {
  // The schedule's own arithmetic stays below l: it runs; only its total cost overflows (so
  // with c ≤ 2, where two advances of ≈ l already pass 2^63, only the stream is checked).
  const Index l = (Index{1} << 62) + 12345;
  RevolveSchedule single(l, 1);
  for (const Action& a : {Action::store(0, 0), Action::advance(l - 1), Action::reverse(l - 1),
                          Action::restore(0, 0), Action::advance(l - 2), Action::reverse(l - 2)})
    EXPECT_EQ(single.next(), a);
  RevolveSchedule two(l, 2);
  EXPECT_EQ(two.next(), Action::store(0, 0));
  const Action split = two.next();
  EXPECT_EQ(split.kind, ActionKind::advance);
  // The optimal first split: β(2, r − 1), or l − β(1, r − 1) if the rest is shorter than that.
  const Index b1 = revolve_beta(2, two.repetitions() - 1),
              b2 = revolve_beta(1, two.repetitions() - 1);
  EXPECT_EQ(split.step, l - b1 >= b2 ? b1 : l - b2);
  EXPECT_EQ(two.next(), Action::store(1, split.step));
  for (int c : {3, 20, 64}) {
    RevolveSchedule schedule(l, c);
    ScheduleValidator validator(l, c);
    Index reversed = 0;
    for (int i = 0; i < 5000; ++i) {
      const Action a = schedule.next();
      validator.apply(a);
      if (a.kind == ActionKind::reverse) ++reversed;
    }
    EXPECT_GT(reversed, 0) << "c = " << c;
    EXPECT_EQ(validator.adjoint_step(), l - reversed);
  }
  EXPECT_THROW(revolve_advances((Index{1} << 62) + 12345, 2), InvalidArgument);
  // The largest horizon there is: the first descent stores at increasing steps up to the first
  // reverse, of step l − 1 (its advances already total l − 1, so a validator's count would not
  // survive the next one).
  const Index largest_l = std::numeric_limits<Index>::max();
  RevolveSchedule largest(largest_l, 40);
  EXPECT_EQ(largest.next(), Action::store(0, 0));
  Index at = 0;
  int slot = 0;
  for (;;) {
    const Action advance = largest.next();
    ASSERT_EQ(advance.kind, ActionKind::advance);
    ASSERT_GT(advance.step, at);
    at = advance.step;
    if (at == largest_l - 1) break;
    ASSERT_EQ(largest.next(), Action::store(++slot, at));
  }
  EXPECT_EQ(largest.next(), Action::reverse(largest_l - 1));
  EXPECT_EQ(slot, 39);  // every snapshot in use
}

TEST(RevolveSchedule, RefusesBadArguments) {
  try {
    RevolveSchedule(0, 3);
    ADD_FAILURE() << "l = 0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("steps l = 0 must be >= 1"), std::string::npos);
  }
  try {
    RevolveSchedule(10, 0);
    ADD_FAILURE() << "c = 0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("snapshots c = 0 must be >= 1"), std::string::npos);
  }
  EXPECT_THROW(RevolveSchedule(-3, 3), InvalidArgument);
  EXPECT_THROW(RevolveSchedule(10, -1), InvalidArgument);
}

TEST(RevolveSchedule, Describes) {
  RevolveSchedule schedule(1000, 20);
  EXPECT_EQ(schedule.name(), "revolve(c = 20)");
  EXPECT_EQ(schedule.steps(), 1000);
  EXPECT_EQ(schedule.slots(), 20);
}

}  // namespace
}  // namespace rwd
