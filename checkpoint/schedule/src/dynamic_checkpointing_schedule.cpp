// DynamicCheckpointingSchedule (rewind/schedule/dynamic_checkpointing_schedule.hpp): Wang, Moin
// & Iaccarino's level-based dynamic checkpointing (SIAM J. Sci. Comput. 31(4), 2009), as an
// action stream, and its advances counted without one.
#include "rewind/schedule/dynamic_checkpointing_schedule.hpp"

#include <stdexcept>

#include "rewind/error.hpp"

namespace rwd {

namespace detail {

void DynamicCheckpoints::reset() {
  entries_.clear();
  entries_.reserve(static_cast<std::size_t>(snapshots_) + 2);
  entries_.push_back({0, kInfiniteLevel, -1});  // y_0: level ∞, the current state
}

DynamicCheckpoints::Move DynamicCheckpoints::allocate_next() {
  Move move;
  const Index t = entries_.back().step;
  if (entries_.size() <= static_cast<std::size_t>(snapshots_)) {
    entries_.push_back({t + 1, 0, -1});  // c snapshots and the placeholder at most
    return move;
  }
  // The dispensable checkpoint with the largest step: scanning from the latest, the first one
  // whose level is below the highest level seen after it. The latest (t) never is.
  Index highest_later = -1;
  for (std::size_t j = entries_.size(); j-- > 0;) {
    const Index level = entries_[j].level;
    if (level < highest_later) {
      move.dropped = true;
      move.dropped_entry = entries_[j];
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(j));
      entries_.push_back({t + 1, 0, -1});
      return move;
    }
    if (level > highest_later) highest_later = level;
  }
  // None: the entry of t goes up one level, to t + 1.
  move.dropped = true;
  move.dropped_entry = entries_.back();
  move.kept_t = false;
  entries_.back() = {t + 1, move.dropped_entry.level + 1, -1};
  return move;
}

}  // namespace detail

namespace {

void check_arguments(Index steps, int snapshots) {
  if (steps < 1)
    detail::fail<InvalidArgument>("dynamic checkpointing: steps l = ", steps, " must be >= 1");
  if (snapshots < 1)
    detail::fail<InvalidArgument>("dynamic checkpointing: snapshots c = ", snapshots,
                                  " must be >= 1 (y_0's snapshot counts)");
}

}  // namespace

DynamicCheckpointingSchedule::DynamicCheckpointingSchedule(Index steps, int snapshots, bool probe)
    : steps_(steps), snapshots_(snapshots), probe_(probe), checkpoints_(snapshots) {
  check_arguments(steps, snapshots);
  free_slots_.reserve(static_cast<std::size_t>(snapshots));
  pending_.reserve(8);
  reset();
}

std::string DynamicCheckpointingSchedule::name() const {
  return "dynamic-wmi(c = " + std::to_string(snapshots_) + (probe_ ? ")" : ", no probe)");
}

std::unique_ptr<Schedule> DynamicCheckpointingSchedule::clone() const {
  return std::make_unique<DynamicCheckpointingSchedule>(steps_, snapshots_, probe_);
}

void DynamicCheckpointingSchedule::reset() {
  checkpoints_.reset();
  free_slots_.clear();
  for (int s = snapshots_ - 1; s >= 0; --s) free_slots_.push_back(s);  // slot 0 first
  pending_.clear();
  next_pending_ = 0;
  current_ = 0;
  target_ = -1;
  forward_done_ = false;
  finished_ = false;
}

void DynamicCheckpointingSchedule::allocate_next(Index t) {
  auto& entries = checkpoints_.entries();
  if (entries.back().step != t || current_ != t)
    throw std::logic_error(name() + ": allocation away from the current state");
  const detail::DynamicCheckpoints::Move move = checkpoints_.allocate_next();
  if (move.dropped && move.dropped_entry.slot >= 0) {
    push(Action::free(move.dropped_entry.slot, move.dropped_entry.step));
    free_slots_.push_back(move.dropped_entry.slot);
  }
  if (move.kept_t) {
    auto& kept = entries[entries.size() - 2];  // the entry of t, now before t + 1's
    if (kept.slot < 0) {
      if (free_slots_.empty()) throw std::logic_error(name() + ": no free slot for a checkpoint");
      kept.slot = free_slots_.back();
      free_slots_.pop_back();
      push(Action::store(kept.slot, t));
    }
  }
}

void DynamicCheckpointingSchedule::plan_reverse() {
  const Index i = target_;
  auto& entries = checkpoints_.entries();
  auto& last = entries.back();
  if (last.step == i) {
    if (current_ != i) {
      if (last.slot < 0) throw std::logic_error(name() + ": checkpoint without a slot");
      push(Action::restore(last.slot, i));
      current_ = i;
    }
    push(Action::reverse(i));
    if (last.slot >= 0) {
      push(Action::free(last.slot, i));
      free_slots_.push_back(last.slot);
    }
    entries.pop_back();
    target_ = i - 1;
  } else if (current_ == last.step && current_ < i) {
    // Recomputing towards i: one move, allocating as in the forward sweep.
    allocate_next(current_);
    push(Action::advance(current_ + 1));
    ++current_;
  } else {
    if (last.slot < 0 || last.step > i)
      throw std::logic_error(name() + ": no checkpoint to recompute step " + std::to_string(i));
    push(Action::restore(last.slot, last.step));
    current_ = last.step;
  }
}

Action DynamicCheckpointingSchedule::next() {
  while (next_pending_ == pending_.size()) {
    if (finished_) return Action::done();
    pending_.clear();
    next_pending_ = 0;
    if (!forward_done_) {
      // Probe: the move from y_t is decided once y_{t+1} is known not final (t ≤ l − 2).
      // Without it: once y_t is (t ≤ l − 1), and the entry allocated for y_l is never used.
      const Index last_move = probe_ ? steps_ - 2 : steps_ - 1;
      const Index t = current_;
      if (t <= last_move) {
        allocate_next(t);
        if (t + 1 < steps_) {
          push(Action::advance(t + 1));
          ++current_;
        } else {
          checkpoints_.entries().pop_back();  // y_l's placeholder: the run stopped
          forward_done_ = true;
          target_ = steps_ - 1;
        }
      } else {
        forward_done_ = true;
        target_ = steps_ - 1;
      }
    } else if (target_ < 0) {
      finished_ = true;
      return Action::done();
    } else {
      plan_reverse();
    }
  }
  return pending_[next_pending_++];
}

Index dynamic_checkpointing_advances(Index steps, int snapshots, bool probe) {
  check_arguments(steps, snapshots);
  detail::DynamicCheckpoints checkpoints(snapshots);
  auto& entries = checkpoints.entries();
  const Index last_move = probe ? steps - 2 : steps - 1;
  for (Index t = 0; t <= last_move; ++t) checkpoints.allocate_next();
  if (!probe) entries.pop_back();  // y_l's placeholder
  Index advances = steps - 1;      // the first sweep, to y_{l−1}
  for (Index i = steps - 1; i >= 0; --i) {
    // Restore the last checkpoint and recompute to i, allocating as the schedule does.
    for (Index t = entries.back().step; t < i; ++t) {
      checkpoints.allocate_next();
      ++advances;
    }
    entries.pop_back();  // step i reversed
  }
  return advances;
}

}  // namespace rwd
