// MemorySnapshotStore: snapshots (state and metadata) come back bit for bit, the slot bookkeeping
// (occupancy, current and peak use) follows every store and free, the statistics count stores,
// restores and peak bytes exactly, and every misuse — a slot out of range, a store into an
// occupied slot, a restore of an empty slot or of the wrong step, a double free, a state of the
// wrong size — is an InvalidArgument that names the slot and steps and leaves the store unchanged.
#include "rewind/store/memory_snapshot_store.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Store = MemorySnapshotStore<B, Carry>;
using testing::same_bits;

constexpr Index kSize = 37;

B::Vector state_of(Index step) {
  return testing::snapshot_state(kSize, step);
}
Carry carry_of(Index step) {
  return testing::snapshot_carry(step);
}

// The message of the InvalidArgument that f throws ("" and a failure when it throws none).
template <class F>
std::string invalid_argument(F&& f) {
  return testing::error_message<InvalidArgument>(std::forward<F>(f));
}

TEST(MemorySnapshotStore, RoundTripIsBitForBit) {
  Store store(4, kSize);
  for (int slot = 0; slot < 4; ++slot)
    store.store(slot, 10 * slot + 3, state_of(10 * slot + 3), carry_of(10 * slot + 3));
  // Restored in another order, twice each (the slot keeps its snapshot), into a dirty vector.
  for (int round = 0; round < 2; ++round)
    for (int slot : {2, 0, 3, 1}) testing::expect_snapshot(store, slot, 10 * slot + 3, kSize);
  EXPECT_EQ(store.statistics().restores_on(LevelKind::memory), 8);
}

TEST(MemorySnapshotStore, StoreCopiesTheState) {
  Store store(1, kSize);
  B::Vector y = state_of(5);
  Carry carry = carry_of(5);
  store.store(0, 5, y, carry);
  y.setConstant(-1.0);  // the caller keeps integrating
  carry.t = 99.0;
  B::Vector out(kSize);
  Carry restored;
  store.restore(0, 5, out, restored);
  EXPECT_TRUE(same_bits(out, state_of(5)));
  EXPECT_TRUE(same_bits(restored, carry_of(5)));
}

// Any trivially copyable record works as metadata; its size counts in the snapshot's bytes.
struct OddMeta {
  unsigned char tag[3];
};
static_assert(sizeof(OddMeta) == 3);

TEST(MemorySnapshotStore, SmallTriviallyCopyableMetadata) {
  MemorySnapshotStore<B, OddMeta> store(2, kSize);
  EXPECT_EQ(store.bytes_per_snapshot(), kSize * 8 + 3);
  store.store(1, 4, state_of(4), OddMeta{{0x00, 0xff, 0x5a}});
  B::Vector y(kSize);
  OddMeta meta{{1, 2, 3}};
  store.restore(1, 4, y, meta);
  EXPECT_EQ(meta.tag[0], 0x00);
  EXPECT_EQ(meta.tag[1], 0xff);
  EXPECT_EQ(meta.tag[2], 0x5a);
  EXPECT_TRUE(same_bits(y, state_of(4)));
}

TEST(MemorySnapshotStore, SlotBookkeeping) {
  Store store(3, kSize);
  EXPECT_EQ(store.slots(), 3);
  EXPECT_EQ(store.slots_in_use(), 0);
  EXPECT_EQ(store.peak_slots_in_use(), 0);
  for (int slot = 0; slot < 3; ++slot) EXPECT_FALSE(store.occupied(slot));

  store.store(2, 7, state_of(7), carry_of(7));
  store.store(0, 8, state_of(8), carry_of(8));
  EXPECT_TRUE(store.occupied(0));
  EXPECT_FALSE(store.occupied(1));
  EXPECT_TRUE(store.occupied(2));
  EXPECT_EQ(store.slots_in_use(), 2);
  EXPECT_EQ(store.peak_slots_in_use(), 2);

  store.free(2);
  EXPECT_FALSE(store.occupied(2));
  EXPECT_EQ(store.slots_in_use(), 1);
  EXPECT_EQ(store.peak_slots_in_use(), 2);

  // A freed slot takes a new snapshot; the old one is gone.
  store.store(2, 11, state_of(11), carry_of(11));
  B::Vector y(kSize);
  Carry carry;
  store.restore(2, 11, y, carry);
  EXPECT_TRUE(same_bits(y, state_of(11)));
  EXPECT_TRUE(same_bits(carry, carry_of(11)));
  EXPECT_THROW(store.restore(2, 7, y, carry), InvalidArgument);

  store.store(1, 12, state_of(12), carry_of(12));
  EXPECT_EQ(store.slots_in_use(), 3);
  EXPECT_EQ(store.peak_slots_in_use(), 3);
  for (int slot = 0; slot < 3; ++slot) store.free(slot);
  EXPECT_EQ(store.slots_in_use(), 0);
  EXPECT_EQ(store.peak_slots_in_use(), 3);
}

TEST(MemorySnapshotStore, StatisticsCountStoresRestoresAndPeakBytes) {
  Store store(5, kSize);
  const std::int64_t bytes = kSize * 8 + static_cast<std::int64_t>(sizeof(Carry));
  EXPECT_EQ(store.bytes_per_snapshot(), bytes);
  EXPECT_EQ(store.reserved_bytes(), 5 * bytes);
  B::Vector y(kSize);
  Carry carry;
  // Hold at most 3 at once across 20 stores.
  for (Index step = 0; step < 20; ++step) {
    const int slot = static_cast<int>(step % 3);
    if (step >= 3) store.free(slot);
    store.store(slot, step, state_of(step), carry_of(step));
    if (step % 2 == 0) store.restore(slot, step, y, carry);
  }
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), 20);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), 10);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), 3 * bytes);
  EXPECT_EQ(store.peak_bytes(), 3 * bytes);
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), 0);
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), 0);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), 0);
  EXPECT_EQ(statistics.file, "");
  EXPECT_FALSE(statistics.asynchronous);
  EXPECT_EQ(statistics.io.writes, 0);
  EXPECT_EQ(statistics.io.staging_bytes, 0);
}

TEST(MemorySnapshotStore, InPlaceSlotsAreCheckedAndCountedLikeStoresAndRestores) {
  Store store(6, kSize);
  store.store(0, 1, state_of(1), carry_of(1));
  // Slots 2–4 filled in place with y_7's "stages", then read back in place.
  std::span<B::Vector> into = store.free_slots_for_writing(2, 3, 7);
  ASSERT_EQ(into.size(), 3u);
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = state_of(70 + static_cast<Index>(i));
  for (int i = 0; i < 3; ++i) store.stored_in_place(2 + i, 7, carry_of(7));
  EXPECT_EQ(store.slots_in_use(), 4);
  Carry meta;
  const std::span<const B::Vector> from = store.held_slots(2, 3, 7, meta);
  EXPECT_EQ(meta.step, carry_of(7).step);
  for (std::size_t i = 0; i < from.size(); ++i)
    EXPECT_TRUE(same_bits(from[i], state_of(70 + static_cast<Index>(i))));
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), 4);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), 3);
  // The same misuse as store and restore is refused.
  EXPECT_NE(invalid_argument([&] { store.free_slots_for_writing(1, 2, 9); }).find("holds y_7"),
            std::string::npos);
  EXPECT_NE(invalid_argument([&] { store.free_slots_for_writing(4, 3, 9); }).find("[4, 7)"),
            std::string::npos);
  EXPECT_NE(invalid_argument([&] { store.held_slots(2, 3, 8, meta); }).find("not y_8"),
            std::string::npos);
  EXPECT_NE(invalid_argument([&] { store.held_slots(4, 2, 7, meta); }).find("is empty"),
            std::string::npos);
  EXPECT_NE(invalid_argument([&] { store.stored_in_place(0, 9, carry_of(9)); }).find("holds y_1"),
            std::string::npos);
  // reset() empties every slot and zeroes the counts, keeping the memory.
  const B::Vector* kept = &into[0];
  store.reset();
  EXPECT_EQ(store.slots_in_use(), 0);
  EXPECT_EQ(store.statistics().stores_on(LevelKind::memory), 0);
  EXPECT_EQ(store.statistics().restores_on(LevelKind::memory), 0);
  EXPECT_EQ(store.peak_bytes(), 0);
  EXPECT_EQ(&store.free_slots_for_writing(2, 1, 0)[0], kept);
}

TEST(MemorySnapshotStore, SlotOutOfRangeIsRefused) {
  Store store(3, kSize);
  B::Vector y = state_of(1);
  Carry carry = carry_of(1);
  for (int slot : {-1, 3, 1000}) {
    const std::string expected = "snapshot slot " + std::to_string(slot) + " is outside [0, 3)";
    EXPECT_EQ(invalid_argument([&] { store.store(slot, 1, y, carry); }), expected);
    EXPECT_EQ(invalid_argument([&] { store.restore(slot, 1, y, carry); }), expected);
    EXPECT_EQ(invalid_argument([&] { store.free(slot); }), expected);
    EXPECT_EQ(invalid_argument([&] { (void)store.occupied(slot); }), expected);
  }
  EXPECT_EQ(store.slots_in_use(), 0);
  EXPECT_EQ(store.statistics().stores_on(LevelKind::memory), 0);
}

TEST(MemorySnapshotStore, StoreIntoAnOccupiedSlotIsRefused) {
  Store store(2, kSize);
  store.store(1, 17, state_of(17), carry_of(17));
  EXPECT_EQ(invalid_argument([&] { store.store(1, 18, state_of(18), carry_of(18)); }),
            "snapshot slot 1 holds y_17; free it before storing y_18");
  // Nothing was overwritten or counted.
  B::Vector y(kSize);
  Carry carry;
  store.restore(1, 17, y, carry);
  EXPECT_TRUE(same_bits(y, state_of(17)));
  EXPECT_TRUE(same_bits(carry, carry_of(17)));
  EXPECT_EQ(store.slots_in_use(), 1);
  EXPECT_EQ(store.statistics().stores_on(LevelKind::memory), 1);
}

TEST(MemorySnapshotStore, RestoreOfAnEmptySlotOrTheWrongStepIsRefused) {
  Store store(2, kSize);
  B::Vector y = B::Vector::Constant(kSize, 3.0);
  Carry carry = carry_of(1);
  EXPECT_EQ(invalid_argument([&] { store.restore(0, 4, y, carry); }),
            "snapshot slot 0 is empty; cannot restore y_4");
  store.store(0, 4, state_of(4), carry_of(4));
  EXPECT_EQ(invalid_argument([&] { store.restore(0, 5, y, carry); }),
            "snapshot slot 0 holds y_4, not y_5");
  store.free(0);
  EXPECT_EQ(invalid_argument([&] { store.restore(0, 4, y, carry); }),
            "snapshot slot 0 is empty; cannot restore y_4");
  // The output was not touched by the refused restores.
  EXPECT_TRUE(same_bits(y, B::Vector::Constant(kSize, 3.0)));
  EXPECT_TRUE(same_bits(carry, carry_of(1)));
  EXPECT_EQ(store.statistics().restores_on(LevelKind::memory), 0);
}

TEST(MemorySnapshotStore, DoubleFreeIsRefused) {
  Store store(2, kSize);
  EXPECT_EQ(invalid_argument([&] { store.free(1); }), "snapshot slot 1 is already free");
  store.store(1, 3, state_of(3), carry_of(3));
  store.free(1);
  EXPECT_EQ(invalid_argument([&] { store.free(1); }), "snapshot slot 1 is already free");
  EXPECT_EQ(store.slots_in_use(), 0);
}

TEST(MemorySnapshotStore, WrongStateSizeAndNegativeStepAreRefused) {
  Store store(2, kSize);
  EXPECT_EQ(invalid_argument([&] { store.store(0, 1, B::Vector::Zero(kSize + 1), carry_of(1)); }),
            "snapshot of 38 values for a store of size 37");
  EXPECT_EQ(invalid_argument([&] { store.store(0, -1, state_of(1), carry_of(1)); }),
            "snapshot of step -1 < 0");
  EXPECT_FALSE(store.occupied(0));
  EXPECT_EQ(store.statistics().stores_on(LevelKind::memory), 0);
}

TEST(MemorySnapshotStore, ConstructorRefusesBadSizes) {
  EXPECT_EQ(invalid_argument([] { Store(0, kSize); }), "snapshot store needs >= 1 slot, got 0");
  EXPECT_EQ(invalid_argument([] { Store(2, -1); }), "state size -1 must be >= 0");
  Store empty_states(1, 0);  // a state of size 0 is allowed: only the metadata is kept
  empty_states.store(0, 2, B::Vector(0), carry_of(2));
  B::Vector y(0);
  Carry carry;
  empty_states.restore(0, 2, y, carry);
  EXPECT_TRUE(same_bits(carry, carry_of(2)));
  EXPECT_EQ(empty_states.bytes_per_snapshot(), static_cast<std::int64_t>(sizeof(Carry)));
}

TEST(MemorySnapshotStore, WorksThroughTheInterface) {
  Store concrete(2, kSize);
  SnapshotStore<B, Carry>& store = concrete;
  EXPECT_EQ(store.slots(), 2);
  store.store(1, 6, state_of(6), carry_of(6));
  store.prefetch(1, 6);  // a hint; nothing to do in memory
  B::Vector y(kSize);
  Carry carry;
  store.restore(1, 6, y, carry);
  store.free(1);
  store.finish();
  EXPECT_TRUE(same_bits(y, state_of(6)));
  EXPECT_TRUE(same_bits(carry, carry_of(6)));
  EXPECT_EQ(store.statistics().stores_on(LevelKind::memory), 1);
  EXPECT_EQ(store.statistics().restores_on(LevelKind::memory), 1);
}

}  // namespace
}  // namespace rwd
