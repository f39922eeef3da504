// OnlineSchedule (rewind/schedule/online_schedule.hpp): the forward phase from OnlinePlacement,
// the reverse phase as revolve over each segment between the snapshots held, last first.
#include "rewind/schedule/online_schedule.hpp"

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"

namespace rwd {

OnlineSchedule::OnlineSchedule(int snapshots, OnlineRule rule)
    : snapshots_(snapshots), placement_(snapshots, rule) {  // the placement refuses c < 1
  slot_of_.reserve(static_cast<std::size_t>(snapshots));
  free_slots_.reserve(static_cast<std::size_t>(snapshots));
  segment_slots_.reserve(static_cast<std::size_t>(snapshots));
  reset();
}

std::string OnlineSchedule::name() const {
  return "online(c = " + std::to_string(snapshots_) +
         (placement_.rule() == OnlineRule::never_above_dynamic ? ", never above dynamic)" : ")");
}

std::unique_ptr<Schedule> OnlineSchedule::clone() const {
  return std::make_unique<OnlineSchedule>(snapshots_,
                                          placement_.rule());  // nothing planned ahead to copy
}

void OnlineSchedule::reset() {
  placement_.reset();
  slot_of_.clear();
  free_slots_.clear();
  for (int s = snapshots_ - 1; s >= 0; --s) free_slots_.push_back(s);  // slot 0 first
  pending_.clear();
  decided_ = false;
  last_given_ = Action::done();
  started_ = false;
  ended_ = false;
  finished_ = false;
  steps_ = -1;
  first_reversed_ = false;
  segment_ = -1;
  segment_start_ = 0;
  segment_schedule_.reset();
  segment_slots_.clear();
}

Index OnlineSchedule::forward_step() const {
  if (!started_) return 0;
  if (last_given_.kind == ActionKind::advance) return last_given_.step;
  return placement_.current_step();  // between the store and free actions of y_n
}

void OnlineSchedule::end_at(Index steps) {
  if (ended_)
    detail::fail<InvalidArgument>(name(), ": end_at(", steps,
                                  ") called twice (the run ended at l = ", steps_, ")");
  if (decided_)
    detail::fail<InvalidArgument>(
        name(), ": end_at(", steps, ") after the actions for y_", placement_.current_step(),
        " began (the last action given was ", last_given_.to_string(),
        "): compute y_{n+1} and test it before asking the schedule about y_n");
  const Index n = forward_step();
  if (steps != n + 1)
    detail::fail<InvalidArgument>(name(), ": end_at(", steps, ") with y_", n,
                                  " current: the run can only end at step ", n + 1);
  ended_ = true;
  steps_ = steps;
}

Action OnlineSchedule::next() {
  const Action action = ended_ ? next_reverse() : next_forward();
  started_ = true;
  last_given_ = action;
  return action;
}

Action OnlineSchedule::next_forward() {
  if (!decided_) {
    // The current state is y_n with n = the step of the last advance (0 at first).
    const Index n = started_ ? last_given_.step : 0;
    if (started_ && last_given_.kind != ActionKind::advance)
      detail::fail<InvalidArgument>(name(), ": internal: no advance before step ", n);
    const OnlinePlacement::Decision d = placement_.decide(n);
    decided_ = true;
    if (d.store) {
      int slot = 0;
      if (d.drop >= 0) {
        slot = slot_of_[static_cast<std::size_t>(d.drop)];
        slot_of_.erase(slot_of_.begin() + d.drop);
      } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
      }
      slot_of_.push_back(slot);
      pending_.push_back(Action::store(slot, n));  // given back to front: free, then store
      if (d.drop >= 0) pending_.push_back(Action::free(slot, d.dropped_step));
    }
  }
  if (!pending_.empty()) {
    const Action action = pending_.back();
    pending_.pop_back();
    return action;
  }
  decided_ = false;
  const Index n = placement_.current_step();
  return Action::advance(detail::checked_add(n, 1, "online: step"));
}

void OnlineSchedule::start_segment(Index end) {
  const std::vector<Index>& positions = placement_.positions();
  const auto i = static_cast<std::size_t>(segment_);
  segment_start_ = positions[i];
  // Revolve slot 0 is the segment's own snapshot; the others are the slots no earlier snapshot
  // holds (snapshots after this one are freed by now): c − i of them in all.
  std::vector<bool> held(static_cast<std::size_t>(snapshots_), false);
  for (std::size_t j = 0; j <= i; ++j) held[static_cast<std::size_t>(slot_of_[j])] = true;
  segment_slots_.assign(1, slot_of_[i]);
  for (int s = 0; s < snapshots_; ++s)
    if (!held[static_cast<std::size_t>(s)]) segment_slots_.push_back(s);
  segment_schedule_.emplace(end - segment_start_, snapshots_ - segment_);
  segment_schedule_->next();  // revolve stores its initial state first: here it is stored already
}

Action OnlineSchedule::translate(const Action& action) {
  switch (action.kind) {
    case ActionKind::advance:
      return Action::advance(segment_start_ + action.step);
    case ActionKind::reverse:
      return Action::reverse(segment_start_ + action.step);
    case ActionKind::store:
      return Action::store(segment_slots_[static_cast<std::size_t>(action.slot)],
                           segment_start_ + action.step);
    case ActionKind::restore:
      return Action::restore(segment_slots_[static_cast<std::size_t>(action.slot)],
                             segment_start_ + action.step);
    case ActionKind::free:
      return Action::free(segment_slots_[static_cast<std::size_t>(action.slot)],
                          segment_start_ + action.step);
    case ActionKind::done:
    case ActionKind::store_stages:  // the segments are revolve's: states only
      break;
  }
  return Action::done();
}

Action OnlineSchedule::next_reverse() {
  if (finished_) return Action::done();
  const std::vector<Index>& positions = placement_.positions();
  if (!first_reversed_) {  // y_{l−1} is current: its step first
    first_reversed_ = true;
    segment_ = static_cast<int>(positions.size()) - 1;
    segment_start_ = steps_ - 1;  // the end of the last segment, for the branch below
    return Action::reverse(steps_ - 1);
  }
  if (segment_schedule_) {
    const Action action = segment_schedule_->next();
    if (action.kind != ActionKind::done) return translate(action);
    segment_schedule_.reset();  // its snapshot is freed: on to the segment before it
    segment_start_ = positions[static_cast<std::size_t>(segment_)];
    --segment_;
  }
  if (segment_ < 0) {
    finished_ = true;
    return Action::done();
  }
  // Segment [t_i, end) with end = segment_start_ (the start of the segment after it, or l − 1).
  // Snapshots lie at steps ≤ l − 2 (y_{l−1} is never asked about), so the segment is not empty.
  const Index end = segment_start_;
  const auto i = static_cast<std::size_t>(segment_);
  start_segment(end);
  return Action::restore(slot_of_[i], positions[i]);
}

ScheduleCost simulate_online(int snapshots, Index steps, const SimulatorOptions& options,
                             OnlineRule rule) {
  if (steps < 1)
    detail::fail<InvalidArgument>("simulate_online: steps l = ", steps, " must be >= 1");
  if (options.max_actions < 0)
    detail::fail<InvalidArgument>("max_actions = ", options.max_actions,
                                  " must be >= 0 (0 = automatic)");
  OnlineSchedule schedule(snapshots, rule);
  ScheduleValidator validator(steps, snapshots, "schedule '" + schedule.name() + "'");
  Index limit = options.max_actions;
  if (limit == 0) {
    Index scaled = 0;
    limit = detail::try_mul(steps, 16, scaled) &&
                    detail::try_add(scaled, 4 * static_cast<Index>(snapshots) + 64, scaled)
                ? scaled
                : detail::kIndexMax;
  }
  for (;;) {
    // The driver's probe: with y_{l−1} current, y_l is final before any action for y_{l−1}.
    if (!schedule.ended() && schedule.forward_step() + 1 == steps) schedule.end_at(steps);
    const Action action = schedule.next();
    validator.apply(action);
    if (action.kind == ActionKind::done) break;
    if (validator.cost().actions >= limit)
      throw ScheduleViolation(schedule.name() + " (l = " + std::to_string(steps) +
                                  "): no done after " + std::to_string(limit) + " actions",
                              validator.cost().actions, action);
  }
  return validator.cost();
}

}  // namespace rwd
