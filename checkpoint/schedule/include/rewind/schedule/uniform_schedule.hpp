// rewind/schedule/uniform_schedule.hpp — equidistant checkpoints, as CVODES' adjoint module
// places them (one per k steps), with a second level for the segment being reversed.
//
//   rwd::UniformSchedule schedule(/*steps=*/1000, /*interval=*/32);
//   schedule.slots();   // 61: 32 first-level snapshots, up to 30 segment states, minus reuse
//
// First sweep: store y_0, y_k, y_2k, … (m = ⌈l/k⌉ snapshots). Reverse sweep, segment by segment
// from the last: from the segment's snapshot y_s, and with length L = min(k, l − s),
//   SegmentReplay::store_states — advance step by step storing y_{s+1} … y_{s+L−2} in extra slots,
//       advance to y_{s+L−1} and reverse it, then restore and reverse each stored state in turn.
//       The extra states of segment j go to slots j + 1, j + 2, … (those of the later segments,
//       freed by then). Budget, exactly the peak held: c = m + max(L' − 2, 0) with L' the last
//       segment's length, or m − 1 + (k − 2) if larger (the segment before the last) — at most
//       ⌈l/k⌉ + k − 2. Advances (m − 1)·k + (l − m) (every step of the first sweep replayed once,
//       except those at segment ends); restores l − 1.
//   SegmentReplay::recompute — no extra slots: each step of the segment is reached by advancing
//       again from y_s. Budget c = m; advances (m − 1)·k + (m − 1)·k(k − 1)/2 + L'(L' − 1)/2 with
//       L' = l − (m − 1)·k (quadratic in k); restores l − 1.
// Stores: m + Σ max(L − 2, 0) with store_states, m with recompute. Every formula counts as
// revolve does (Griewank & Walther, ACM TOMS 26(1), 2000): y_0 takes a slot, and each reverse step
// re-runs its own forward step, which is not an advance.
#pragma once

#include <memory>

#include <string>

#include "rewind/schedule/schedule.hpp"

namespace rwd {

enum class SegmentReplay {
  store_states,  // replay a segment once, keeping its states in extra slots (CVODES' way)
  recompute,     // replay from the segment's snapshot for every step: no extra slots
};

class UniformSchedule final : public Schedule {
 public:
  // l ≥ 1 steps, a snapshot every `interval` ≥ 1 steps (an interval ≥ l means one segment).
  // Throws InvalidArgument for bad values or a slot count that does not fit in an int.
  UniformSchedule(Index steps, Index interval, SegmentReplay replay = SegmentReplay::store_states);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return slots_; }
  std::string name() const override;  // "uniform(k = 32)" or "uniform(k = 32, recompute)"
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<UniformSchedule>(*this);
    copy->reset();
    return copy;
  }

  Index interval() const { return interval_; }
  Index segments() const { return segments_; }
  SegmentReplay replay() const { return replay_; }

  // The closed forms above, for tests and planning (checked 64-bit; throw on overflow).
  Index predicted_advances() const;
  Index predicted_stores() const;

 private:
  void begin_segment(Index segment);

  Index steps_;
  Index interval_;
  SegmentReplay replay_;
  Index segments_;  // m = ⌈l/k⌉
  int slots_;

  Index current_ = 0;          // step of the current state
  bool sweeping_ = true;       // first sweep: storing y_0, y_k, …
  bool swept_stored_ = false;  // first sweep: the current segment start is stored
  Index segment_ = 0;          // segment being stored (first sweep) or reversed
  Index seg_start_ = 0;        // s
  Index seg_length_ = 0;       // L
  Index filled_ = 0;           // store_states: y_{s+1} … y_{s+filled_} are stored
  Index next_reverse_ =
      0;  // index i of the next step s + i to reverse, −1 when the segment is done
  Action pending_free_ = Action::done();  // a free due right after the last reverse
  bool finished_ = false;
};

}  // namespace rwd
