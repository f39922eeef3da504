// A MultiLevelSnapshotStore of device, host and disk (rwd::device_host_disk_store, the
// three-level layout) and its host level: slots [0, device) go to the backend's memory,
// [device, device + host) to host memory, the rest to the snapshot file; all three come back bit
// for bit on Eigen and on ThrustBackend's CPP system, and are counted per level; a prefetch
// reaches the host and disk levels; misuse and slots that do not fit are refused before any file
// exists; a real ThreeLevelSchedule runs through it with the per-level counts it predicts; and
// the restore lookahead can be limited to the host slots.
#include "rewind/store/multi_level_snapshot_store.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/schedule/three_level_schedule.hpp"
#include "rewind/store/restore_lookahead.hpp"
#include "rewind/store/snapshot_level_probe.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using test::ScratchDirectory;
using testing::contains;
using testing::error_message;

constexpr Index kSize = 50;
constexpr std::int64_t kBytes = kSize * 8 + static_cast<std::int64_t>(sizeof(Carry));

template <class B>
typename B::Vector state_of(Index step) {
  std::vector<double> values(kSize);
  for (Index i = 0; i < kSize; ++i) values[i] = 1.0 / (3.0 + static_cast<double>(step * kSize + i));
  typename B::Vector v = B::zeros(kSize);
  B::copy_from_host(values, v);
  return v;
}
template <class B>
std::vector<double> host_of(const typename B::Vector& v) {
  std::vector<double> values(static_cast<std::size_t>(B::size(v)));
  B::copy_to_host(v, values);
  return values;
}
Carry carry_of(Index step) {
  Carry c;
  c.step = step;
  c.t = 0.5 * static_cast<double>(step);
  c.h = 0.01 + static_cast<double>(step);
  return c;
}

template <class B>
void expect_snapshot(SnapshotStore<B, Carry>& store, int slot, Index step) {
  typename B::Vector y = B::zeros(kSize);
  Carry c;
  store.restore(slot, step, y, c);
  EXPECT_EQ(host_of<B>(y), host_of<B>(state_of<B>(step))) << "slot " << slot;
  EXPECT_EQ(c.step, step);
  EXPECT_EQ(c.t, carry_of(step).t);
  EXPECT_EQ(c.h, carry_of(step).h);
}

DiskStoreOptions in(const std::filesystem::path& directory) {
  DiskStoreOptions options;
  options.directory = directory;
  return options;
}

template <class B>
void routes_every_level() {
  ScratchDirectory scratch;
  auto store = device_host_disk_store<B, Carry>({.device = 2, .host = 3, .disk = 4}, kSize,
                                                in(scratch.path()));
  EXPECT_EQ(store.slots(), 9);
  ASSERT_EQ(store.levels(), 3);
  EXPECT_EQ(store.level(0).name, "device");
  EXPECT_EQ(store.level(1).kind, LevelKind::host);
  EXPECT_EQ(store.first_slot(1), 2);
  EXPECT_EQ(store.first_slot(2), 5);
  for (int slot : {0, 1, 2, 4, 5, 8})
    store.store(slot, 10 + slot, state_of<B>(10 + slot), carry_of(10 + slot));
  store.prefetch(4, 14);  // host
  store.prefetch(8, 18);  // disk
  for (int slot : {8, 4, 0, 2, 5, 1}) expect_snapshot<B>(store, slot, 10 + slot);
  store.finish();
  const SnapshotStoreStatistics s = store.statistics();
  EXPECT_EQ(s.stores_on(LevelKind::memory), 2);
  EXPECT_EQ(s.stores_on(LevelKind::host), 2);
  EXPECT_EQ(s.stores_on(LevelKind::disk), 2);
  EXPECT_EQ(s.restores_on(LevelKind::memory), 2);
  EXPECT_EQ(s.restores_on(LevelKind::host), 2);
  EXPECT_EQ(s.restores_on(LevelKind::disk), 2);
  EXPECT_EQ(s.peak_bytes_on(LevelKind::memory), 2 * kBytes);
  EXPECT_EQ(s.peak_bytes_on(LevelKind::host), 2 * kBytes);
  EXPECT_EQ(s.peak_bytes_on(LevelKind::disk), 2 * kBytes);
  EXPECT_EQ(scratch.files().size(), 1u);
}

TEST(DeviceHostDiskStore, RoutesEveryLevelOnEigen) {
  routes_every_level<EigenBackend>();
}
TEST(DeviceHostDiskStore, RoutesEveryLevelOnThrust) {
  routes_every_level<ThrustBackend>();
}

TEST(DeviceHostDiskStore, WithoutDiskSlotsMakesNoFileAndNeedsNoDirectory) {
  auto store =
      device_host_disk_store<EigenBackend, Carry>({.device = 1, .host = 2, .disk = 0}, kSize);
  store.store(2, 5, state_of<EigenBackend>(5), carry_of(5));
  expect_snapshot<EigenBackend>(store, 2, 5);
  EXPECT_EQ(store.store_of(LevelKind::disk), nullptr);
}

TEST(DeviceHostDiskStore, MisuseIsRefusedOnEveryLevel) {
  using B = ThrustBackend;
  ScratchDirectory scratch;
  auto store = device_host_disk_store<B, Carry>(
      {.device = 2, .host = 2, .disk = 1, .device_allocated = 1}, kSize, in(scratch.path()));
  store.store(2, 7, state_of<B>(7), carry_of(7));
  B::Vector y = B::zeros(kSize);
  Carry c;
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.store(2, 8, y, c); }),
                       "host snapshot slot 0 holds y_7"));
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.restore(2, 9, y, c); }),
                       "holds y_7, not y_9"));
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.restore(3, 9, y, c); }),
                       "host snapshot slot 1 is empty"));
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.free(4); }), "already free"));
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.store(5, 1, y, c); }),
                       "slot 5 is outside [0, 5)"));
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.store(1, 1, y, c); }),
                       "slot 1 is outside [0, 1)"));  // device slot 1 was not allocated
  B::Vector small = B::zeros(kSize - 1);
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.store(3, 1, small, c); }),
                       "49 values for a store of size 50"));
}

TEST(DeviceHostDiskStore, SlotsThatDoNotFitAreRefusedBeforeAnyFile) {
  ScratchDirectory scratch;
  const auto make = [&](ThreeLevelSlots slots, SnapshotLevelLimits limits) {
    return device_host_disk_store<EigenBackend, Carry>(slots, kSize, in(scratch.path()), limits);
  };
  const auto refused = [&](ThreeLevelSlots slots, SnapshotLevelLimits limits,
                           const std::string& says) {
    const std::string message = error_message<InvalidArgument>([&] { make(slots, limits); });
    EXPECT_TRUE(contains(message, says)) << message;
    EXPECT_TRUE(scratch.files().empty()) << "nothing left on disk: " << message;
  };
  refused({.device = 0, .host = 0, .disk = 5}, {}, "no device and no host slots (5 on disk)");
  refused({.device = -1, .host = 2, .disk = 5}, {}, "-1 device slots");
  refused({.device = 1, .host = -2, .disk = 5}, {}, "-2 host slots");
  refused({.device = 1, .host = 1, .disk = -5}, {}, "-5 disk slots");
  refused({.device = 4, .host = 1, .disk = 5}, {.device_bytes = 3 * kBytes},
          "4 device snapshots of");
  refused({.device = 1, .host = 8, .disk = 5}, {.host_bytes = 7 * kBytes}, "8 host snapshots of");
  refused({.device = 1 << 30, .host = 1, .disk = 5}, {}, "free memory now");
  // Exactly enough is accepted.
  auto fits = make({.device = 3, .host = 7, .disk = 1},
                   {.device_bytes = 3 * kBytes, .host_bytes = 7 * kBytes});
  EXPECT_EQ(fits.slots(), 11);
}

TEST(DeviceHostDiskStore, AThreeLevelScheduleRunsThroughWithItsCounts) {
  using B = ThrustBackend;
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.write_time = 0.02;
  costs.read_time = 0.02;
  costs.host_write_time = 0.4;
  costs.host_read_time = 0.3;
  costs.disk_write_time = 4.0;
  costs.disk_read_time = 3.0;
  ThreeLevelSchedule schedule(300, 2, 4, 6, costs);
  const ScheduleCost& predicted = schedule.predicted_cost();
  ASSERT_GT(predicted.host_stores, 0);
  ASSERT_GT(predicted.disk_stores, 0);
  ScratchDirectory scratch;
  auto store = device_host_disk_store<B, Carry>({.device = 2, .host = 4, .disk = 6}, kSize,
                                                in(scratch.path()));
  // Announce host restores (and only those) ahead, as the driver does.
  RestoreLookahead host_ahead(schedule.clone(), 2, 6);
  B::Vector y = state_of<B>(0);
  Carry carry = carry_of(0);
  schedule.reset();
  for (Index i = 0;; ++i) {
    if (const auto fetch = host_ahead.before(i)) {
      EXPECT_GE(fetch->slot, 2);
      EXPECT_LT(fetch->slot, 6);
      store.prefetch(fetch->slot, fetch->step);
    }
    const Action a = schedule.next();
    if (a.kind == ActionKind::done) break;
    if (a.kind == ActionKind::advance) {  // a stand-in state per step
      y = state_of<B>(a.step);
      carry = carry_of(a.step);
    } else if (a.kind == ActionKind::store) {
      store.store(a.slot, a.step, y, carry);
    } else if (a.kind == ActionKind::restore) {
      store.restore(a.slot, a.step, y, carry);
      EXPECT_EQ(host_of<B>(y), host_of<B>(state_of<B>(a.step)));
      EXPECT_EQ(carry.step, a.step);
    } else if (a.kind == ActionKind::free) {
      store.free(a.slot);
    }
  }
  store.finish();
  const SnapshotStoreStatistics s = store.statistics();
  EXPECT_EQ(s.stores_on(LevelKind::host), predicted.host_stores);
  EXPECT_EQ(s.restores_on(LevelKind::host), predicted.host_restores);
  EXPECT_EQ(s.stores_on(LevelKind::disk), predicted.disk_stores);
  EXPECT_EQ(s.restores_on(LevelKind::disk), predicted.disk_restores);
  EXPECT_EQ(s.stores_on(LevelKind::memory),
            predicted.stores - predicted.host_stores - predicted.disk_stores);
  EXPECT_EQ(s.restores_on(LevelKind::memory),
            predicted.restores - predicted.host_restores - predicted.disk_restores);
}

}  // namespace
}  // namespace rwd

namespace rwd {
namespace {

TEST(SnapshotLevelProbe, MeasuresBothMemoryLevelsAndConvertsToSteps) {
  const LevelCosts levels = measure_level_costs<ThrustBackend>(1 << 16, 3);
  EXPECT_GT(levels.device_write_seconds, 0.0);
  EXPECT_GT(levels.host_write_seconds, 0.0);
  EXPECT_GT(levels.host_read_seconds, 0.0);
  EXPECT_EQ(levels.snapshot_bytes, (1 << 16) * 8);
  EXPECT_GT(levels.host_bytes_per_second(), 0.0);
  CostModel costs;
  DiskCosts disk;
  disk.write_seconds = 0.02;
  disk.read_seconds = 0.01;
  set_level_costs(costs, 0.001, levels, &disk);
  EXPECT_EQ(costs.disk_write_time, 0.02 / 0.001);
  EXPECT_EQ(costs.host_read_time, levels.host_read_seconds / 0.001);
  EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { set_level_costs(costs, 0.0, levels); }),
                       "step_seconds = 0"));
  EXPECT_TRUE(
      contains(error_message<InvalidArgument>([&] { measure_level_costs<EigenBackend>(0); }),
               "state size 0"));
  // Round several slots (what a stage-aware run's chooser does: copies as the run meets them).
  const LevelCosts round = measure_level_costs<EigenBackend>(1 << 12, 7, 4);
  EXPECT_GT(round.device_write_seconds, 0.0);
  EXPECT_GT(round.device_read_seconds, 0.0);
  EXPECT_TRUE(
      contains(error_message<InvalidArgument>([&] { measure_level_costs<EigenBackend>(16, 5, 0); }),
               "slots = 0"));
}

}  // namespace
}  // namespace rwd
