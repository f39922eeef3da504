// DynamicCheckpointingSchedule (Wang, Moin & Iaccarino 2009), the reference rewind's online
// schedule is measured against: valid in the simulator with at most c slots for every l ≤ 400 and
// c ≤ 20 in both information models, counted alike by dynamic_checkpointing_advances; a hand-traced
// action stream; the paper's optimality claim (p(l, c) for up to (c + 1)(c + 2)/2 time steps);
// counts from a second, independent coding of the rules; bad input refused.
#include "rewind/schedule/dynamic_checkpointing_schedule.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {
namespace {

// One advance action per step: far more actions than the simulator's default limit for small c.
const SimulatorOptions kNoLimit{.max_actions = Index{1} << 60};

TEST(DynamicCheckpointingSchedule, ValidWithinBudgetAndCountedAlike) {
  for (int c = 1; c <= 20; ++c) {
    for (Index l = 1; l <= 400; ++l) {
      for (const bool probe : {true, false}) {
        DynamicCheckpointingSchedule schedule(l, c, probe);
        const ScheduleCost cost = simulate(schedule, kNoLimit);  // throws on a broken rule
        ASSERT_LE(cost.peak_slots, c) << schedule.name() << ", l = " << l;
        ASSERT_EQ(cost.reverses, l);
        ASSERT_EQ(cost.first_sweep_advances, l - 1);
        ASSERT_EQ(cost.advances, dynamic_checkpointing_advances(l, c, probe))
            << schedule.name() << ", l = " << l;
        ASSERT_GE(cost.advances, revolve_advances(l, c)) << schedule.name() << ", l = " << l;
      }
    }
  }
}

TEST(DynamicCheckpointingSchedule, HandTracedStream) {
  // c = 2, l = 5, with the probe. Levels: y_0 ∞; y_1 0; y_2 replaces nothing dispensable, so the
  // entry of 2 goes up to 3 at level 1; then y_1 (level 0 before a level 1) is dispensable and
  // gives its slot to y_3. Reverse: 4 from the current state, 3 from its slot, 2 by recomputing
  // from y_0 (storing y_1 again on the way), 1 and 0 from their slots.
  DynamicCheckpointingSchedule schedule(5, 2);
  const std::vector<Action> expected = {
      Action::store(0, 0),   Action::advance(1),    Action::store(1, 1), Action::advance(2),
      Action::advance(3),    Action::free(1, 1),    Action::store(1, 3), Action::advance(4),
      Action::reverse(4),    Action::restore(1, 3), Action::reverse(3),  Action::free(1, 3),
      Action::restore(0, 0), Action::advance(1),    Action::store(1, 1), Action::advance(2),
      Action::reverse(2),    Action::restore(1, 1), Action::reverse(1),  Action::free(1, 1),
      Action::restore(0, 0), Action::reverse(0),    Action::free(0, 0),  Action::done()};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const Action a = schedule.next();
    ASSERT_EQ(a, expected[k]) << "action " << k << ": " << a.to_string() << ", expected "
                              << expected[k].to_string();
  }
  EXPECT_EQ(schedule.next(), Action::done());
  EXPECT_EQ(simulate(schedule).advances, revolve_advances(5, 2));  // 6
  schedule.reset();
  EXPECT_EQ(schedule.next(), expected.front());
  auto copy = schedule.clone();
  EXPECT_EQ(copy->next(), expected.front());
  EXPECT_EQ(copy->name(), "dynamic-wmi(c = 2)");
  EXPECT_EQ(DynamicCheckpointingSchedule(5, 2, false).name(), "dynamic-wmi(c = 2, no probe)");
}

TEST(DynamicCheckpointingSchedule, OptimalUpToTheirBoundWithTheProbe) {
  // WMI prove the minimal recomputation for up to (δ + 1)(δ + 2)/2 time steps; with the probe,
  // l − 1 steps are run before the reverse from y_{l−1}, so that is l ≤ β(c, 2) + 1.
  for (int c = 1; c <= 20; ++c) {
    for (Index l = 1; l <= revolve_beta(c, 2) + 1; ++l)
      ASSERT_EQ(dynamic_checkpointing_advances(l, c), revolve_advances(l, c))
          << "l = " << l << ", c = " << c;
    // … and not beyond: the first length past it costs more than offline revolve (c ≥ 2).
    if (c >= 2) {
      const Index l = revolve_beta(c, 2) + 2;
      EXPECT_GT(dynamic_checkpointing_advances(l, c), revolve_advances(l, c)) << "c = " << c;
    }
  }
}

TEST(DynamicCheckpointingSchedule, WithoutTheProbeOneSnapshotIsSpentOnTheEnd) {
  // The decision about y_{l−1} comes before the run is known to stop: for c < l < β(c, 2) one
  // advance more than the optimum, where the probe reaches it.
  for (int c = 2; c <= 20; ++c) {
    for (Index l = 1; l <= c; ++l) ASSERT_EQ(dynamic_checkpointing_advances(l, c, false), l - 1);
    for (Index l = c + 1; l < revolve_beta(c, 2); ++l)
      ASSERT_EQ(dynamic_checkpointing_advances(l, c, false), revolve_advances(l, c) + 1)
          << "l = " << l << ", c = " << c;
  }
}

TEST(DynamicCheckpointingSchedule, CountsOfAnIndependentCoding) {
  // Advances above p(l, c), with and without the probe, from a separate prototype of the same
  // rules (a short script written apart from this class, not derived from it).
  struct Case {
    int c;
    Index l, extra_probe, extra_no_probe;
  };
  const Case cases[] = {{2, 8, 1, 2},    {2, 11, 0, 6},   {2, 12, 3, 4}, {3, 12, 1, 5},
                        {3, 13, 3, 4},   {3, 22, 3, 13},  {4, 19, 6, 7}, {4, 37, 3, 13},
                        {5, 26, 10, 11}, {6, 33, 10, 17}, {6, 86, 3, 13}};
  for (const Case& k : cases) {
    const Index optimum = revolve_advances(k.l, k.c);
    EXPECT_EQ(dynamic_checkpointing_advances(k.l, k.c) - optimum, k.extra_probe)
        << "l = " << k.l << ", c = " << k.c;
    EXPECT_EQ(dynamic_checkpointing_advances(k.l, k.c, false) - optimum, k.extra_no_probe)
        << "l = " << k.l << ", c = " << k.c;
  }
}

TEST(DynamicCheckpointingSchedule, RefusesBadInput) {
  EXPECT_THROW(DynamicCheckpointingSchedule(0, 3), InvalidArgument);
  EXPECT_THROW(DynamicCheckpointingSchedule(10, 0), InvalidArgument);
  EXPECT_THROW(dynamic_checkpointing_advances(-1, 3), InvalidArgument);
  EXPECT_THROW(dynamic_checkpointing_advances(10, 0, false), InvalidArgument);
  try {
    DynamicCheckpointingSchedule(10, 0);
    FAIL() << "c = 0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("snapshots c = 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rwd
