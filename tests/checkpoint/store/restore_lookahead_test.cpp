// RestoreLookahead: the fetches it announces are exactly the restores from slots >= first_slot,
// in schedule order, each announced once, after the last store into its slot has been executed
// and no earlier than the action after the previous announced restore — checked against a
// hand-written action stream with literal answers and against an independent replay of real
// schedules (revolve, revolve on disk, two-level); and, driving a tiered store, every disk
// restore is served by its prefetch with the right data.
#include "rewind/store/restore_lookahead.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/store/multi_level_snapshot_store.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

// A fixed action stream as a schedule.
class ScriptedSchedule final : public Schedule {
 public:
  ScriptedSchedule(std::vector<Action> actions, int slots)
      : actions_(std::move(actions)), slots_(slots) {}
  Action next() override {
    return position_ < actions_.size() ? actions_[position_++] : Action::done();
  }
  Index steps() const override { return 0; }
  int slots() const override { return slots_; }
  std::string name() const override { return "scripted"; }
  void reset() override { position_ = 0; }
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<ScriptedSchedule>(*this);
    copy->reset();
    return copy;
  }

 private:
  std::vector<Action> actions_;
  int slots_;
  std::size_t position_ = 0;
};

struct Announced {
  Index at;  // announced by before(at)
  int slot;
  Index step;
  friend bool operator==(const Announced&, const Announced&) = default;
};

std::ostream& operator<<(std::ostream& out, const Announced& a) {
  return out << "{before(" << a.at << "): slot " << a.slot << ", y_" << a.step << "}";
}

std::vector<Action> actions_of(Schedule& schedule) {
  schedule.reset();
  std::vector<Action> actions;
  for (Action action = schedule.next(); action.kind != ActionKind::done; action = schedule.next())
    actions.push_back(action);
  schedule.reset();
  return actions;
}

// What the lookahead announces for a stream of `count` actions (the final done not counted),
// calling before(i) for every i up to and a few past the done.
std::vector<Announced> announcements(RestoreLookahead& lookahead, Index count) {
  std::vector<Announced> out;
  for (Index i = 0; i <= count + 3; ++i)
    if (auto fetch = lookahead.before(i)) out.push_back({i, fetch->slot, fetch->step});
  return out;
}

// The expected announcements, from a replay of the action stream: every restore from a slot
// >= first_slot, announced right after the last store into its slot or right after the previous
// such restore, whichever is later (one restore is announced at a time).
std::vector<Announced> expected_announcements(const std::vector<Action>& actions, int first_slot) {
  std::map<int, Index> last_store;
  Index previous_restore = -1;
  std::vector<Announced> out;
  for (Index i = 0; i < static_cast<Index>(actions.size()); ++i) {
    const Action& action = actions[static_cast<std::size_t>(i)];
    if (action.kind == ActionKind::store) last_store[action.slot] = i;
    if (action.kind == ActionKind::restore && action.slot >= first_slot) {
      const auto store = last_store.find(action.slot);
      EXPECT_NE(store, last_store.end())
          << "restore from slot " << action.slot << " before any store";
      const Index ready = store == last_store.end() ? 0 : store->second + 1;
      out.push_back({std::max(ready, previous_restore + 1), action.slot, action.step});
      previous_restore = i;
    }
  }
  return out;
}

// The properties the header promises, checked by replaying what each slot holds.
void expect_announcements_are_sound(const std::vector<Action>& actions, int first_slot,
                                    const std::vector<Announced>& announced) {
  std::vector<Index> restores;  // positions of the restores to be announced
  for (Index i = 0; i < static_cast<Index>(actions.size()); ++i) {
    const Action& action = actions[static_cast<std::size_t>(i)];
    if (action.kind == ActionKind::restore && action.slot >= first_slot) restores.push_back(i);
  }
  ASSERT_EQ(announced.size(), restores.size());
  std::map<int, Index> holds;  // slot → step held, as the driver has executed so far
  std::size_t next = 0;
  for (Index i = 0; i <= static_cast<Index>(actions.size()); ++i) {
    // before(i): whatever is announced here must already sit in its slot...
    while (next < announced.size() && announced[next].at == i) {
      const Announced& a = announced[next];
      const Action& restore = actions[static_cast<std::size_t>(restores[next])];
      EXPECT_EQ(a.slot, restore.slot) << a;
      EXPECT_EQ(a.step, restore.step) << a;
      EXPECT_LE(a.at, restores[next]) << a << ": announced after its restore";
      EXPECT_EQ(holds.count(a.slot), 1u) << a;
      EXPECT_EQ(holds[a.slot], a.step) << a << ": the slot holds another snapshot";
      // ...and stay there until it is restored: no store or free of that slot in between.
      for (Index j = i; j < restores[next]; ++j) {
        const Action& between = actions[static_cast<std::size_t>(j)];
        EXPECT_FALSE((between.kind == ActionKind::store || between.kind == ActionKind::free) &&
                     between.slot == a.slot)
            << a << ": slot changed by action " << j << " (" << between.to_string() << ")";
      }
      ++next;
    }
    if (i == static_cast<Index>(actions.size())) break;
    const Action& action = actions[static_cast<std::size_t>(i)];
    if (action.kind == ActionKind::store) holds[action.slot] = action.step;
    if (action.kind == ActionKind::free) holds.erase(action.slot);
  }
  EXPECT_EQ(next, announced.size()) << "announcements out of order or at repeated indices";
}

// Runs the lookahead over a schedule and checks it against the replay; returns how many fetches
// were announced.
std::size_t check_schedule(const std::function<std::unique_ptr<Schedule>()>& make, int first_slot) {
  auto reference = make();
  const std::vector<Action> actions = actions_of(*reference);
  RestoreLookahead lookahead(make(), first_slot);
  const std::vector<Announced> announced =
      announcements(lookahead, static_cast<Index>(actions.size()));
  EXPECT_EQ(announced, expected_announcements(actions, first_slot));
  expect_announcements_are_sound(actions, first_slot, announced);
  return announced.size();
}

TEST(RestoreLookahead, ScriptedStreamGivesTheLiteralAnswer) {
  const std::vector<Action> actions = {
      Action::store(1, 0),    // 0
      Action::advance(4),     // 1
      Action::store(2, 4),    // 2
      Action::advance(6),     // 3
      Action::reverse(5),     // 4
      Action::restore(2, 4),  // 5  ready after 2: announced at 3
      Action::reverse(4),     // 6
      Action::free(2, 4),     // 7
      Action::restore(1, 0),  // 8  ready after 0, but only once 5 is done: at 6
      Action::advance(2),     // 9
      Action::store(2, 2),    // 10 the slot is reused
      Action::advance(3),     // 11
      Action::reverse(3),     // 12 (a stand-in for more work)
      Action::restore(2, 2),  // 13 ready after the new store 10: at 11
      Action::reverse(2),     // 14
      Action::free(2, 2),     // 15
      Action::restore(1, 0),  // 16 ready after 0, once 13 is done: at 14
      Action::reverse(1),     // 17
      Action::restore(0, 0),  // 18 slot 0 was never stored: below first_slot here
      Action::reverse(0),     // 19
  };
  {
    RestoreLookahead lookahead(std::make_unique<ScriptedSchedule>(actions, 3), 1);
    EXPECT_EQ(announcements(lookahead, 20),
              (std::vector<Announced>{{3, 2, 4}, {6, 1, 0}, {11, 2, 2}, {14, 1, 0}}));
  }
  {
    RestoreLookahead lookahead(std::make_unique<ScriptedSchedule>(actions, 3), 2);
    EXPECT_EQ(announcements(lookahead, 20), (std::vector<Announced>{{3, 2, 4}, {11, 2, 2}}));
  }
  {
    RestoreLookahead lookahead(std::make_unique<ScriptedSchedule>(actions, 3), 3);
    EXPECT_TRUE(announcements(lookahead, 20).empty());
  }
}

TEST(RestoreLookahead, RevolveOnDiskAnnouncesEveryRestore) {
  for (const auto& [l, c] :
       std::vector<std::pair<Index, int>>{{60, 6}, {100, 3}, {25, 30}, {2, 1}}) {
    const Index steps = l;
    const int snapshots = c;
    SCOPED_TRACE("revolve(" + std::to_string(steps) + ", " + std::to_string(snapshots) +
                 ") on disk");
    const std::size_t count = check_schedule(
        [&] {
          return std::make_unique<DiskOnlySchedule>(
              std::make_unique<RevolveSchedule>(steps, snapshots));
        },
        0);
    EXPECT_EQ(count, static_cast<std::size_t>(steps - 1));  // revolve restores l − 1 times
  }
}

TEST(RestoreLookahead, RevolveAnnouncesOnlyRestoresFromHighSlots) {
  for (int first_slot : {1, 2, 4}) {
    SCOPED_TRACE("first_slot " + std::to_string(first_slot));
    const std::size_t count =
        check_schedule([] { return std::make_unique<RevolveSchedule>(80, 5); }, first_slot);
    EXPECT_GT(count, 0u);
    EXPECT_LT(count, 79u);
  }
  // At or above the number of slots: nothing to fetch.
  EXPECT_EQ(check_schedule([] { return std::make_unique<RevolveSchedule>(80, 5); }, 5), 0u);
  // One step: nothing is ever restored.
  EXPECT_EQ(check_schedule([] { return std::make_unique<RevolveSchedule>(1, 1); }, 0), 0u);
}

CostModel disk_costs() {
  CostModel costs;
  costs.adjoint_cost_factor = 2.0;
  costs.disk_write_time = 1.5;
  costs.disk_read_time = 1.5;
  return costs;
}

TEST(RestoreLookahead, TwoLevelScheduleAnnouncesItsDiskRestores) {
  const auto make = [] { return std::make_unique<MultiLevelSchedule>(150, 3, 6, disk_costs()); };
  const int memory = make()->memory_slots();
  const std::size_t count = check_schedule(make, memory);
  EXPECT_EQ(count, static_cast<std::size_t>(make()->predicted_cost().disk_restores));
  EXPECT_GT(count, 0u);
}

TEST(RestoreLookahead, NeedsASchedule) {
  try {
    RestoreLookahead lookahead(nullptr, 0);
    FAIL() << "no InvalidArgument";
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()), "restore lookahead needs a schedule");
  }
}

constexpr Index kSize = 64;

// The lookahead as the adjoint driver uses it, in front of a memory-and-disk store: every disk
// restore is prefetched, and the prefetch serves it with the right snapshot. (Writes are finished
// after each store so that a staging buffer is always free for the prefetch: the count is then
// exact.)
TEST(RestoreLookahead, PrefetchesServeEveryDiskRestoreOfAMemoryAndDiskStore) {
  using B = EigenBackend;
  const auto state_of = [](Index step) {
    B::Vector y(kSize);
    for (Index i = 0; i < kSize; ++i)
      y[i] = static_cast<double>(step) + 1e-3 * static_cast<double>(i);
    return y;
  };
  MultiLevelSchedule schedule(150, 3, 6, disk_costs());
  const int memory = schedule.memory_slots();
  test::ScratchDirectory scratch;
  DiskStoreOptions disk;
  disk.directory = scratch.path();
  auto store = memory_and_disk_store<B, Carry>(memory, schedule.slots() - memory, kSize, disk);
  RestoreLookahead lookahead(std::make_unique<MultiLevelSchedule>(150, 3, 6, disk_costs()), memory);

  Index current = 0, disk_restores = 0, prefetches = 0;
  B::Vector y(kSize);
  Carry carry;
  for (Index i = 0;; ++i) {
    if (auto fetch = lookahead.before(i)) {
      store.prefetch(fetch->slot, fetch->step);
      ++prefetches;
    }
    const Action action = schedule.next();
    if (action.kind == ActionKind::done) break;
    switch (action.kind) {
      case ActionKind::advance:
        current = action.step;
        break;
      case ActionKind::store:
        store.store(action.slot, current, state_of(current),
                    Carry{.t = 0.5 * static_cast<double>(current),
                          .h = 0.5,
                          .error_prev = 1.0,
                          .step = current,
                          .rejected = 0,
                          .noise_seed = 0});
        store.finish();
        break;
      case ActionKind::restore:
        store.restore(action.slot, action.step, y, carry);
        ASSERT_EQ(std::memcmp(y.data(), state_of(action.step).data(), sizeof(double) * kSize), 0)
            << action.to_string();
        ASSERT_EQ(carry.step, action.step);
        ASSERT_EQ(carry.t, 0.5 * static_cast<double>(action.step));
        current = action.step;
        if (action.slot >= memory) ++disk_restores;
        break;
      case ActionKind::free:
        store.free(action.slot);
        break;
      default:
        break;
    }
  }
  store.finish();
  ASSERT_GT(disk_restores, 0);
  EXPECT_EQ(prefetches, disk_restores);
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), disk_restores);
  EXPECT_EQ(statistics.io.prefetch_hits, disk_restores);
  EXPECT_EQ(statistics.io.prefetch_misses, 0);
  EXPECT_EQ(statistics.io.reads, disk_restores);
}

}  // namespace
}  // namespace rwd
