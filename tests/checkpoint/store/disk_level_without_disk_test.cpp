// A program that links rewind::store but not rewind::disk (this test links no disk level, see
// tests/CMakeLists.txt): plans that keep every snapshot in memory work as ever, and everything
// that would need the disk level — a plan with a disk level, a DiskSnapshotStore, a disk cost
// measurement — is refused with a StorageError that names rewind::disk, before any file exists.
// tests/checkpoint/store/check_no_disk_libraries.cmake checks that this program neither needs
// libhdf5 nor libmpi.
#include <gtest/gtest.h>

#include <string>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/store_for_plan.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using test::ScratchDirectory;
using testing::error_message;
using testing::expect_message;

constexpr Index kSize = 16;

DiskStoreOptions in(const ScratchDirectory& scratch) {
  DiskStoreOptions options;
  options.directory = scratch.path();
  return options;
}

TEST(DiskLevelWithoutDisk, TheProgramHasNoDiskLevel) {
  EXPECT_FALSE(disk_level_linked());
}

TEST(DiskLevelWithoutDisk, AMemoryPlanStoresAndRestores) {
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::revolve(3), 20);
  const auto store = make_snapshot_store<B, Carry>(plan, kSize, DiskStoreOptions{});
  B::Vector state = B::Vector::LinSpaced(kSize, -1.0, 2.0);
  Carry carry;
  carry.t = 0.25;
  store->store(0, 7, state, carry);
  B::Vector back = B::Vector::Zero(kSize);
  Carry carry_back;
  store->restore(0, 7, back, carry_back);
  EXPECT_EQ(back, state);
  EXPECT_EQ(carry_back.t, 0.25);
}

TEST(DiskLevelWithoutDisk, APlanWithADiskLevelIsRefusedBeforeAnyFileExists) {
  PlanRequest request = PlanRequest::revolve(4);
  request.all_on_disk = true;
  const CheckpointPlan plan = plan_checkpoints(request, 50);
  ScratchDirectory scratch;
  const std::string message =
      error_message<StorageError>([&] { make_snapshot_store<B, Carry>(plan, kSize, in(scratch)); });
  expect_message(message, "schedule '" + plan.name + "' keeps up to");
  expect_message(message, "snapshots on disk");
  expect_message(message, "link the CMake target rewind::disk");
  EXPECT_TRUE(scratch.files().empty());
}

TEST(DiskLevelWithoutDisk, ADiskStoreIsRefused) {
  ScratchDirectory scratch;
  const std::string message = error_message<StorageError>(
      [&] { DiskSnapshotStore<B, Carry> store(3, kSize, in(scratch)); });
  expect_message(message, "a disk snapshot store of 3 slots");
  expect_message(message, "rewind::disk");
  EXPECT_TRUE(scratch.files().empty());
}

TEST(DiskLevelWithoutDisk, MeasuringTheDiskIsRefused) {
  ScratchDirectory scratch;
  const std::string message =
      error_message<StorageError>([&] { measure_disk_costs(scratch.path(), kSize, 8); });
  expect_message(message, "measuring the disk's costs in " + scratch.path().string());
  expect_message(message, "rewind::disk");
  EXPECT_TRUE(scratch.files().empty());
}

}  // namespace
}  // namespace rwd
