// UniformSchedule (rewind/schedule/uniform_schedule.hpp): a state machine over the segment
// being reversed, O(1) memory and O(1) work per action.
#include "rewind/schedule/uniform_schedule.hpp"

#include <algorithm>
#include <limits>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"

namespace rwd {

UniformSchedule::UniformSchedule(Index steps, Index interval, SegmentReplay replay)
    : steps_(steps), interval_(interval), replay_(replay) {
  if (steps < 1) detail::fail<InvalidArgument>("uniform: steps l = ", steps, " must be >= 1");
  if (interval < 1)
    detail::fail<InvalidArgument>("uniform: interval k = ", interval, " must be >= 1");
  if (replay != SegmentReplay::store_states && replay != SegmentReplay::recompute)
    detail::fail<InvalidArgument>("uniform: unknown segment replay mode ",
                                  static_cast<int>(replay));
  segments_ = (steps - 1) / interval + 1;
  Index slots = segments_;
  if (replay == SegmentReplay::store_states) {
    // Reversing segment j holds slots 0 … j and L_j − 2 extra states (in the slots that segments
    // j + 1, … have freed, then beyond): the peak is at the last segment or the one before it.
    const Index last = steps - (segments_ - 1) * interval;
    slots = segments_ + std::max<Index>(last - 2, 0);
    if (segments_ >= 2) slots = std::max(slots, segments_ - 1 + std::max<Index>(interval - 2, 0));
  }
  // slots ≤ l: no overflow.
  if (slots > std::numeric_limits<int>::max())
    detail::fail<InvalidArgument>("uniform: l = ", steps, ", k = ", interval, " needs ", slots,
                                  " slots, more than an int can count");
  slots_ = static_cast<int>(slots);
  reset();
}

std::string UniformSchedule::name() const {
  std::string n = "uniform(k = " + std::to_string(interval_);
  if (replay_ == SegmentReplay::recompute) n += ", recompute";
  return n + ")";
}

void UniformSchedule::reset() {
  current_ = 0;
  sweeping_ = true;
  swept_stored_ = false;
  segment_ = 0;
  seg_start_ = 0;
  seg_length_ = 0;
  filled_ = 0;
  next_reverse_ = -1;
  pending_free_ = Action::done();
  finished_ = false;
}

void UniformSchedule::begin_segment(Index segment) {
  segment_ = segment;
  seg_start_ = segment * interval_;
  seg_length_ = std::min(interval_, steps_ - seg_start_);
  filled_ = 0;
  next_reverse_ = seg_length_ - 1;
}

Index UniformSchedule::predicted_advances() const {
  const Index m = segments_, k = std::min(interval_, steps_);  // k > l: one segment of l
  const Index last = steps_ - (m - 1) * k;                     // L', in [1, k]
  const Index sweep = detail::checked_mul(m - 1, k, "uniform advances");
  if (replay_ == SegmentReplay::store_states) return sweep + (steps_ - m);
  // Σ over segments of L(L − 1)/2: (m − 1) full ones and the last.
  const Index full = detail::checked_mul(
      m - 1, detail::checked_mul(k, k - 1, "uniform advances") / 2, "uniform advances");
  return detail::checked_add(detail::checked_add(sweep, full, "uniform advances"),
                             detail::checked_mul(last, last - 1, "uniform advances") / 2,
                             "uniform advances");
}

Index UniformSchedule::predicted_stores() const {
  if (replay_ == SegmentReplay::recompute) return segments_;
  const Index m = segments_, k = std::min(interval_, steps_);
  const Index last = steps_ - (m - 1) * k;
  return m + (m - 1) * std::max<Index>(k - 2, 0) + std::max<Index>(last - 2, 0);
}

Action UniformSchedule::next() {
  if (finished_) return Action::done();

  if (sweeping_) {  // store y_{jk} in slot j, advance k steps, … up to the last segment's start
    if (!swept_stored_) {
      swept_stored_ = true;
      return Action::store(static_cast<int>(segment_), current_);
    }
    sweeping_ = false;
    if (segment_ < segments_ - 1) {
      sweeping_ = true;
      swept_stored_ = false;
      ++segment_;
      current_ += interval_;
      return Action::advance(current_);
    }
    begin_segment(segments_ - 1);  // the current state is its start
  }

  if (pending_free_.kind != ActionKind::done) {
    const Action a = pending_free_;
    pending_free_ = Action::done();
    return a;
  }
  if (next_reverse_ < 0) {  // segment done
    if (segment_ == 0) {
      finished_ = true;
      return Action::done();
    }
    begin_segment(segment_ - 1);
  }

  const bool store_states = replay_ == SegmentReplay::store_states;
  const Index s = seg_start_, i = next_reverse_, target = s + i;
  // Slot of y_{s+t}, 1 ≤ t ≤ L − 2 (store_states only): j + t, the first-level slots of the
  // segments after j (all freed by now) and then beyond them.
  const auto extra_slot = [&](Index t) { return static_cast<int>(segment_ + t); };

  if (current_ == target) {
    next_reverse_ = i - 1;
    if (i == 0)
      pending_free_ = Action::free(static_cast<int>(segment_), s);
    else if (store_states && i <= seg_length_ - 2)
      pending_free_ = Action::free(extra_slot(i), target);
    return Action::reverse(target);
  }
  if (current_ > target) {  // back to the nearest stored state at or before the target
    if (store_states && i >= 1 && i <= filled_) {
      current_ = target;
      return Action::restore(extra_slot(i), target);
    }
    current_ = s;
    return Action::restore(static_cast<int>(segment_), s);
  }
  // current_ < target: forward, storing y_{s+1} … y_{s+L−2} on the way with store_states.
  if (store_states) {
    const Index t = current_ - s;
    if (t >= 1 && t > filled_ && t <= seg_length_ - 2) {
      filled_ = t;
      return Action::store(extra_slot(t), current_);
    }
    current_ = std::min(target, s + filled_ + 1);
    return Action::advance(current_);
  }
  current_ = target;
  return Action::advance(current_);
}

}  // namespace rwd
