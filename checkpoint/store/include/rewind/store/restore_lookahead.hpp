// rewind/store/restore_lookahead.hpp — which snapshot to fetch from a slow level before the
// schedule asks for it, found by running a second copy of the schedule ahead.
//
//   rwd::RestoreLookahead lookahead(make_schedule(steps), /*first slow slot=*/memory_slots);
//   for (rwd::Index i = 0;; ++i) {
//     if (auto fetch = lookahead.before(i)) store.prefetch(fetch->slot, fetch->step);
//     execute(schedule.next());
//   }
//
// An offline schedule is a deterministic stream, so a second instance (the scout) produces the
// same actions: it runs ahead to the next restore from a slot ≥ `first_slot`, and remembers the
// last store into each slot on the way. The restore is announced as soon as the driver has passed
// that store — earlier the slot would still hold an older snapshot — so the read overlaps every
// action in between. One restore is announced at a time; the scout keeps O(slots) memory and
// visits each action once, so the lookahead costs one extra action generation per action.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/types.hpp"

namespace rwd {

class RestoreLookahead {
 public:
  struct Fetch {
    int slot;
    Index step;
  };

  // `scout` must be a fresh instance of the schedule the driver executes. Restores from slots in
  // [first_slot, end_slot) are announced (end_slot −1: every slot from first_slot on).
  RestoreLookahead(std::unique_ptr<Schedule> scout, int first_slot, int end_slot = -1)
      : scout_(std::move(scout)), first_slot_(first_slot), end_slot_(end_slot) {
    if (!scout_) detail::fail<InvalidArgument>("restore lookahead needs a schedule");
    scout_->reset();
    last_store_.assign(static_cast<std::size_t>(std::max(scout_->slots(), 1)), -1);
  }

  // The same with a scout that is not fresh: a copy, in its present state, of a schedule whose
  // action number `next_index` comes next and whose actions from there on are fixed (an online
  // schedule once its end is known, rwd::OnlineSchedule::copy_in_state). Slots stored before
  // next_index hold what their restores want.
  static RestoreLookahead continuing(std::unique_ptr<Schedule> scout, Index next_index,
                                     int first_slot, int end_slot = -1) {
    RestoreLookahead lookahead(std::move(scout), first_slot, end_slot, next_index);
    return lookahead;
  }

  // Call before executing action number `index` (0, 1, 2, … without gaps). Returns the restore
  // to start fetching now, at most once per restore.
  std::optional<Fetch> before(Index index) {
    if (has_target_ && target_index_ < index) has_target_ = false;  // executed
    if (!has_target_ && !scout_done_) scan();
    if (has_target_ && !announced_ && index > ready_after_) {
      announced_ = true;
      return Fetch{target_slot_, target_step_};
    }
    return std::nullopt;
  }

 private:
  RestoreLookahead(std::unique_ptr<Schedule> scout, int first_slot, int end_slot, Index next_index)
      : scout_(std::move(scout)),
        first_slot_(first_slot),
        end_slot_(end_slot),
        scouted_(next_index) {
    if (!scout_) detail::fail<InvalidArgument>("restore lookahead needs a schedule");
    last_store_.assign(static_cast<std::size_t>(std::max(scout_->slots(), 1)), -1);
  }

  void scan() {
    for (;;) {
      const Action action = scout_->next();
      const Index position = scouted_++;
      if (action.kind == ActionKind::done) {
        scout_done_ = true;
        return;
      }
      if (action.slot >= 0 && static_cast<std::size_t>(action.slot) >= last_store_.size())
        last_store_.resize(static_cast<std::size_t>(action.slot) + 1, -1);
      if (action.kind == ActionKind::store)
        last_store_[static_cast<std::size_t>(action.slot)] = position;
      if (action.kind == ActionKind::restore && action.slot >= first_slot_ &&
          (end_slot_ < 0 || action.slot < end_slot_)) {
        has_target_ = true;
        announced_ = false;
        target_index_ = position;
        target_slot_ = action.slot;
        target_step_ = action.step;
        ready_after_ = last_store_[static_cast<std::size_t>(action.slot)];
        return;
      }
    }
  }

  std::unique_ptr<Schedule> scout_;
  int first_slot_;
  int end_slot_;
  std::vector<Index> last_store_;  // action index of the last store into each slot, −1 if none
  Index scouted_ = 0;              // actions the scout has produced
  bool scout_done_ = false;
  bool has_target_ = false;
  bool announced_ = false;
  Index target_index_ = -1;
  int target_slot_ = -1;
  Index target_step_ = -1;
  Index ready_after_ = -1;
};

}  // namespace rwd
