// rewind/schedule/disk_only_schedule.hpp — any schedule with every slot moved to one level:
// all to disk (DiskOnlySchedule) or all to memory (MemoryOnlySchedule).
//
//   rwd::DiskOnlySchedule schedule(std::make_unique<rwd::RevolveSchedule>(100000, 20));
//   schedule.memory_slots();   // 0: the driver keeps all 20 snapshots in the snapshot file
//
// The action stream is the inner schedule's, unchanged; only the level of the slots differs. Used
// to run a single-level schedule entirely from disk, to run a two-level schedule entirely in
// memory (the reference of the disk benchmarks: same actions, no I/O), and to test that every
// store gives the same gradient bit for bit.
#pragma once

#include <memory>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/schedule.hpp"

namespace rwd {

class DiskOnlySchedule final : public Schedule {
 public:
  explicit DiskOnlySchedule(std::unique_ptr<Schedule> inner) : inner_(std::move(inner)) {
    if (!inner_) detail::fail<InvalidArgument>("DiskOnlySchedule needs a schedule");
  }
  Action next() override { return inner_->next(); }
  Index steps() const override { return inner_->steps(); }
  int slots() const override { return inner_->slots(); }
  int memory_slots() const override { return 0; }
  int stage_units() const override { return inner_->stage_units(); }
  std::string name() const override { return inner_->name() + " on disk"; }
  void reset() override { inner_->reset(); }
  std::unique_ptr<Schedule> clone() const override {
    return std::make_unique<DiskOnlySchedule>(inner_->clone());
  }

 private:
  std::unique_ptr<Schedule> inner_;
};

class MemoryOnlySchedule final : public Schedule {
 public:
  explicit MemoryOnlySchedule(std::unique_ptr<Schedule> inner) : inner_(std::move(inner)) {
    if (!inner_) detail::fail<InvalidArgument>("MemoryOnlySchedule needs a schedule");
  }
  Action next() override { return inner_->next(); }
  Index steps() const override { return inner_->steps(); }
  int slots() const override { return inner_->slots(); }
  int memory_slots() const override { return inner_->slots(); }
  int stage_units() const override { return inner_->stage_units(); }
  std::string name() const override { return inner_->name() + " in memory"; }
  void reset() override { inner_->reset(); }
  std::unique_ptr<Schedule> clone() const override {
    return std::make_unique<MemoryOnlySchedule>(inner_->clone());
  }

 private:
  std::unique_ptr<Schedule> inner_;
};

}  // namespace rwd
