// UniformSchedule: valid in the simulator for both segment replays, counts equal to the closed
// forms (recomputed here from first principles), budget honest, k = 1 equal to store-all.
#include "rewind/schedule/uniform_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/store_all_schedule.hpp"

namespace rwd {
namespace {

struct Expected {
  Index advances = 0, stores = 0, slots = 0;
};

// Walks the segments: m = ⌈l/k⌉ snapshots in the first sweep, which advances (m − 1)·k; then
// each segment [s, s + L) costs L − 1 advances when its states are stored (L − 2 extra stores,
// held with the snapshots of segments 0 … j), or L(L − 1)/2 when recomputed.
Expected expected(Index l, Index k, SegmentReplay replay) {
  const Index m = (l + k - 1) / k;
  Expected e;
  e.advances = (m - 1) * k;
  e.stores = m;
  e.slots = m;
  for (Index j = 0; j < m; ++j) {
    const Index length = std::min(k, l - j * k);
    if (replay == SegmentReplay::store_states) {
      e.advances += length - 1;
      e.stores += std::max<Index>(length - 2, 0);
      e.slots = std::max(e.slots, (j + 1) + std::max<Index>(length - 2, 0));
    } else {
      e.advances += length * (length - 1) / 2;
    }
  }
  return e;
}

TEST(UniformSchedule, CountsMatchTheFormulas) {
  for (SegmentReplay replay : {SegmentReplay::store_states, SegmentReplay::recompute})
    for (Index l = 1; l <= 80; ++l)
      for (Index k = 1; k <= 90; ++k) {
        SCOPED_TRACE("l = " + std::to_string(l) + ", k = " + std::to_string(k));
        UniformSchedule schedule(l, k, replay);
        const ScheduleCost cost = simulate(schedule);
        const Expected e = expected(l, k, replay);
        ASSERT_EQ(cost.advances, e.advances);
        ASSERT_EQ(cost.stores, e.stores);
        ASSERT_EQ(schedule.slots(), e.slots);
        ASSERT_EQ(cost.peak_slots, schedule.slots());  // the budget is exactly what is held
        ASSERT_EQ(cost.advances, schedule.predicted_advances());
        ASSERT_EQ(cost.stores, schedule.predicted_stores());
        ASSERT_EQ(cost.restores, l - 1);
        ASSERT_EQ(cost.reverses, l);
        ASSERT_LE(schedule.slots(), (l + k - 1) / k + std::max<Index>(std::min(k, l) - 2, 0));
      }
}

TEST(UniformSchedule, LongHorizons) {
  UniformSchedule stored(1000000, 1000);
  const ScheduleCost a = simulate(stored);
  EXPECT_EQ(a.advances, 999 * 1000 + (1000000 - 1000));
  EXPECT_EQ(stored.slots(), 1000 + 998);  // the last segment is full: m + k − 2
  UniformSchedule recomputed(100000, 300, SegmentReplay::recompute);
  const ScheduleCost b = simulate(recomputed);
  EXPECT_EQ(b.advances, recomputed.predicted_advances());
  EXPECT_EQ(recomputed.slots(), 334);
}

TEST(UniformSchedule, IntervalOneIsStoreAll) {
  for (Index l : {1, 2, 5, 64}) {
    UniformSchedule uniform(l, 1);
    StoreAllSchedule all(l);
    EXPECT_EQ(uniform.slots(), all.slots());
    for (;;) {
      const Action a = all.next();
      ASSERT_EQ(uniform.next(), a);
      if (a.kind == ActionKind::done) break;
    }
  }
}

TEST(UniformSchedule, IntervalPastTheHorizonIsOneSegment) {
  UniformSchedule schedule(10, Index{1} << 50);
  EXPECT_EQ(schedule.segments(), 1);
  EXPECT_EQ(schedule.slots(), 9);
  EXPECT_EQ(simulate(schedule).advances, 9);
  UniformSchedule recompute(10, Index{1} << 50, SegmentReplay::recompute);
  EXPECT_EQ(recompute.slots(), 1);
  EXPECT_EQ(simulate(recompute).advances, 45);
  EXPECT_EQ(recompute.predicted_advances(), 45);
}

TEST(UniformSchedule, DescribesAndRefuses) {
  EXPECT_EQ(UniformSchedule(100, 10).name(), "uniform(k = 10)");
  EXPECT_EQ(UniformSchedule(100, 10, SegmentReplay::recompute).name(),
            "uniform(k = 10, recompute)");
  EXPECT_EQ(UniformSchedule(100, 10).interval(), 10);
  EXPECT_THROW(UniformSchedule(0, 10), InvalidArgument);
  EXPECT_THROW(UniformSchedule(10, 0), InvalidArgument);
  EXPECT_THROW(UniformSchedule(10, 2, static_cast<SegmentReplay>(7)), InvalidArgument);
  EXPECT_THROW(UniformSchedule(Index{1} << 40, 1), InvalidArgument);  // 2^40 slots
}

}  // namespace
}  // namespace rwd
