// MultiLevelSchedule (rewind/schedule/multilevel_schedule.hpp): runs a two-level plan
// (rewind/schedule/multilevel_plan.hpp) one action at a time — a stack of held snapshots for the
// exact plan, as in revolve_schedule.cpp, or revolve over super-steps with memory revolve inside.
#include "rewind/schedule/multilevel_schedule.hpp"

#include "rewind/error.hpp"

namespace rwd {

int MultiLevelSchedule::SlotPool::take() {
  if (!free_.empty()) {
    const int slot = free_.back();
    free_.pop_back();
    return slot;
  }
  if (next_ >= first_ + count_)  // the plan never holds more than the level has
    detail::fail<Error>("two-level schedule: internal error, no free slot in [", first_, ", ",
                        first_ + count_, ")");
  return next_++;
}

MultiLevelSchedule::MultiLevelSchedule(Index steps, int memory_snapshots, int disk_snapshots,
                                       const CostModel& costs)
    : steps_(steps),
      memory_(memory_snapshots),
      disk_(disk_snapshots),
      costs_(costs),
      plan_(detail::plan_two_level(steps, memory_snapshots, disk_snapshots, costs)),
      memory_pool_(0, memory_snapshots),
      disk_pool_(memory_snapshots, disk_snapshots) {
  if (plan_.method == detail::TwoLevelPlan::Method::super_steps) {  // else a table plan
    const Index k = plan_.super_step, L = plan_.super_steps;
    if (L == 1) {
      leaf_.emplace(steps, memory_);
    } else {
      outer_.emplace(L, disk_);
      if (k >= 2) leaf_.emplace(k, memory_);
      const Index last = steps - (L - 1) * k;
      if (last >= 2 && last != k) last_leaf_.emplace(last, memory_);
    }
  }
  reset();
}

std::string MultiLevelSchedule::name() const {
  return "two-level(memory = " + std::to_string(memory_) + ", disk = " + std::to_string(disk_) +
         ")";
}

double MultiLevelSchedule::predicted_time() const {
  return rwd::predicted_time(plan_.counts, costs_);
}

void MultiLevelSchedule::reset() {
  stack_.clear();
  memory_pool_.reset();
  disk_pool_.reset();
  memory_used_ = 0;
  disk_used_ = 0;
  current_ = 0;
  fine_ = steps_;
  pending_level_ = TwoLevelPlace::memory;
  queued_ = Action::done();
  started_ = false;
  finished_ = false;
  if (outer_) outer_->reset();
  if (leaf_) leaf_->reset();
  if (last_leaf_) last_leaf_->reset();
  active_ = 0;
  leaf_start_ = 0;
  in_place_.reset();
  in_place_start_ = 0;
  in_place_slots_.clear();
}

Action MultiLevelSchedule::next() {
  return plan_.method == detail::TwoLevelPlan::Method::super_steps ? next_super_steps()
                                                                   : next_table();
}

// ---------------------------------------------------------------------------------------------
// Table plans: the stack holds the snapshots of the nested ranges being reversed; the top one
// heads [top.step, fine_). Decisions come from the table, for the free slots as they are now.
// ---------------------------------------------------------------------------------------------
Action MultiLevelSchedule::next_table() {
  if (finished_) return Action::done();
  if (queued_.kind != ActionKind::done) {
    const Action a = queued_;
    queued_ = Action::done();
    return a;
  }
  while (in_place_) {  // memory revolve from the range's snapshot (its slot 0)
    Action a = in_place_->next();
    if (a.kind == ActionKind::done) {  // the range is reversed
      in_place_.reset();
      current_ = fine_ = in_place_start_;
      break;
    }
    a.step += in_place_start_;
    auto& mapped = in_place_slots_[static_cast<std::size_t>(std::max(a.slot, 0))];
    switch (a.kind) {
      case ActionKind::store:
        if (a.slot == 0) continue;  // the range's snapshot is held already
        mapped = memory_pool_.take();
        ++memory_used_;
        return Action::store(mapped, a.step);
      case ActionKind::restore:
        return Action::restore(mapped, a.step);
      case ActionKind::free:
        if (a.slot == 0) continue;  // freed with its range
        memory_pool_.give(mapped);
        --memory_used_;
        return Action::free(mapped, a.step);
      default:
        return a;  // advance, reverse
    }
  }
  const detail::TwoLevelTable& table = *plan_.table;
  if (!started_) {
    started_ = true;
    if (steps_ >= 2) {  // y_0 is needed again: store it on the level the plan chose
      const TwoLevelPlace level = table.first_level();
      const int slot = pool(level).take();
      ++used(level);
      stack_.push_back({0, slot, level, false});
      return Action::store(slot, 0);
    }
  }
  if (!stack_.empty() && stack_.back().step == fine_) {  // its range is reversed
    const Held h = stack_.back();
    stack_.pop_back();
    pool(h.level).give(h.slot);
    --used(h.level);
    return Action::free(h.slot, h.step);
  }
  if (fine_ == 0) {
    finished_ = true;
    return Action::done();
  }
  if (current_ == fine_ - 1) {
    fine_ = current_;
    return Action::reverse(current_);
  }
  Held& top = stack_.back();
  if (current_ != top.step) {
    if (current_ > top.step && current_ < fine_ - 1) {  // at a split point: store it
      const int slot = pool(pending_level_).take();
      ++used(pending_level_);
      stack_.push_back({current_, slot, pending_level_, false});
      return Action::store(slot, current_);
    }
    current_ = top.step;  // the range above is reversed: back to this one's start
    top.settled = false;
    return Action::restore(top.slot, current_);
  }
  // current_ = top.step: reverse [current_, fine_), at least two steps.
  const Index free_memory = memory_ - memory_used_, free_disk = disk_ - disk_used_;
  const detail::TwoLevelTable::Decision d =
      table.decision(top.level, current_, fine_, free_memory, free_disk);  // after a move: the
                                                                           // new state's
  if (!top.settled) {
    top.settled = true;
    if (d.move) {  // move y_s to the other level: store there now, free the old slot next
      const TwoLevelPlace to =
          top.level == TwoLevelPlace::memory ? TwoLevelPlace::disk : TwoLevelPlace::memory;
      const int slot = pool(to).take();
      ++used(to);
      queued_ = Action::free(top.slot, top.step);
      pool(top.level).give(top.slot);
      --used(top.level);
      top.slot = slot;
      top.level = to;
      return Action::store(slot, current_);
    }
  }
  if (d.in_place) {
    const Index c = table.in_place_snapshots(current_, fine_, free_memory);
    in_place_.emplace(fine_ - current_, static_cast<int>(c));
    in_place_start_ = current_;
    in_place_slots_.assign(static_cast<std::size_t>(c), -1);
    in_place_slots_[0] = top.slot;
    return next_table();  // its first action, a store of y_s, is skipped: the next one
  }
  pending_level_ = d.right;
  current_ += d.split;
  return Action::advance(current_);
}

// ---------------------------------------------------------------------------------------------
// Super-step plan.
// ---------------------------------------------------------------------------------------------
RevolveSchedule* MultiLevelSchedule::active_leaf() {
  if (active_ == 1) return &*leaf_;
  if (active_ == 2) return &*last_leaf_;
  return nullptr;
}

// An action of the memory revolve over [leaf_start_, leaf_start_ + length): steps shifted, slots
// are memory slots as they are.
Action MultiLevelSchedule::leaf_action(const Action& a) {
  Action out = a;
  if (a.kind != ActionKind::done) out.step = a.step + leaf_start_;
  return out;
}

Action MultiLevelSchedule::next_super_steps() {
  if (!outer_) return leaf_->next();  // L = 1: memory revolve, nothing else
  if (RevolveSchedule* leaf = active_leaf()) {
    const Action a = leaf->next();
    if (a.kind != ActionKind::done) return leaf_action(a);
    active_ = 0;  // the super-step is reversed; on with the disk level
  }
  const Index k = plan_.super_step, L = plan_.super_steps;
  const Action a = outer_->next();
  switch (a.kind) {
    case ActionKind::advance:
      return Action::advance(a.step * k);
    case ActionKind::store:
      return Action::store(memory_ + a.slot, a.step * k);
    case ActionKind::restore:
      return Action::restore(memory_ + a.slot, a.step * k);
    case ActionKind::free:
      return Action::free(memory_ + a.slot, a.step * k);
    case ActionKind::reverse: {  // reverse super-step a.step with memory revolve
      const Index start = a.step * k;
      const Index length = a.step == L - 1 ? steps_ - start : k;
      if (length == 1) return Action::reverse(start);
      active_ = length == k ? 1 : 2;
      leaf_start_ = start;
      RevolveSchedule* leaf = active_leaf();
      leaf->reset();
      return leaf_action(leaf->next());  // store y_start into memory slot 0
    }
    default:
      return a;  // done
  }
}

}  // namespace rwd
