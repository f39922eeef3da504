// rewind/store/snapshot_slots.hpp — the slot bookkeeping of a single-level snapshot store (memory
// or disk): the step each slot holds, how many slots are in use and the most at once, the stores
// and restores made, and the refusal of every misuse with an InvalidArgument that names the slot
// and the steps. The store moves the data; this says whether it may.
//
//   rwd::detail::SnapshotSlots slots(20, "snapshot slot");
//   const std::size_t s = slots.check_store(3, 17);   // refused if slot 3 is out of range or full
//   ...copy y_17 into the store's slot s...
//   slots.stored(s, 17);
//   slots.check_restore(3, 17);                        // refused if slot 3 holds another step
//   slots.restored();
//   slots.freed(slots.check_free(3));
#pragma once

#include <algorithm>

#include <cstddef>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

class SnapshotSlots {
 public:
  // `what` names a slot in messages ("snapshot slot", "disk snapshot slot").
  SnapshotSlots(int slots, const char* what)
      : what_(what), steps_(static_cast<std::size_t>(slots), -1) {}

  int size() const { return static_cast<int>(steps_.size()); }
  bool occupied(int slot) const { return steps_[index(slot)] >= 0; }
  // Whether `slot` holds y_step.
  bool holds(int slot, Index step) const { return steps_[index(slot)] == step; }
  int in_use() const { return in_use_; }
  int peak_in_use() const { return peak_in_use_; }
  Index stores() const { return stores_; }
  Index restores() const { return restores_; }

  // The position of `slot`; refused when it is out of range.
  std::size_t index(int slot) const {
    if (slot < 0 || slot >= size())
      fail<InvalidArgument>(what_, " ", slot, " is outside [0, ", size(), ")");
    return static_cast<std::size_t>(slot);
  }

  // Refuses storing y_step into an occupied slot; returns its position.
  std::size_t check_store(int slot, Index step) const {
    const std::size_t s = index(slot);
    if (steps_[s] >= 0)
      fail<InvalidArgument>(what_, " ", slot, " holds y_", steps_[s], "; free it before storing y_",
                            step);
    return s;
  }

  // Refuses restoring y_step from an empty slot or from one that holds another step.
  std::size_t check_restore(int slot, Index step) const {
    const std::size_t s = index(slot);
    if (steps_[s] < 0)
      fail<InvalidArgument>(what_, " ", slot, " is empty; cannot restore y_", step);
    if (steps_[s] != step)
      fail<InvalidArgument>(what_, " ", slot, " holds y_", steps_[s], ", not y_", step);
    return s;
  }

  // Refuses freeing a free slot; returns its position.
  std::size_t check_free(int slot) const {
    const std::size_t s = index(slot);
    if (steps_[s] < 0) fail<InvalidArgument>(what_, " ", slot, " is already free");
    return s;
  }

  // Records what the store did, once it is done (after the checks above).
  void stored(std::size_t s, Index step) {
    steps_[s] = step;
    ++stores_;
    if (++in_use_ > peak_in_use_) peak_in_use_ = in_use_;
  }
  // A slot found holding y_step, left by an earlier process of a resumed run (not a store).
  void adopted(std::size_t s, Index step) {
    steps_[s] = step;
    if (++in_use_ > peak_in_use_) peak_in_use_ = in_use_;
  }
  void restored() { ++restores_; }
  // Every slot free and every count zero, as when constructed.
  void reset() {
    std::fill(steps_.begin(), steps_.end(), Index{-1});
    in_use_ = peak_in_use_ = 0;
    stores_ = restores_ = 0;
  }
  void freed(std::size_t s) {
    steps_[s] = -1;
    --in_use_;
  }

 private:
  const char* what_;
  std::vector<Index> steps_;  // step held per slot, −1 = free
  int in_use_ = 0;
  int peak_in_use_ = 0;
  Index stores_ = 0;
  Index restores_ = 0;
};

}  // namespace rwd::detail
