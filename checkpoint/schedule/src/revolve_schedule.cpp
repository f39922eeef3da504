// RevolveSchedule (rewind/schedule/revolve_schedule.hpp): Griewank & Walther's binomial
// checkpointing (ACM TOMS 26(1), 2000), generated one action at a time from a stack of snapshot
// positions, written from the algorithm's description.
#include "rewind/schedule/revolve_schedule.hpp"

#include <algorithm>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd {

RevolveSchedule::RevolveSchedule(Index steps, int snapshots)
    : steps_(steps), snapshots_(snapshots) {
  if (steps < 1) detail::fail<InvalidArgument>("revolve: steps l = ", steps, " must be >= 1");
  if (snapshots < 1)
    detail::fail<InvalidArgument>("revolve: snapshots c = ", snapshots,
                                  " must be >= 1 (the initial state takes one)");
  repetitions_ = revolve_repetitions(steps, snapshots);
  beta_initial_ = repetitions_ > 0 ? revolve_beta(snapshots, repetitions_ - 1) : 0;
  // The stack never holds more than min(c, l) entries; reserve a modest part of it up front.
  stack_.reserve(static_cast<std::size_t>(std::min<Index>({snapshots, steps, 1024})));
  reset();
}

std::string RevolveSchedule::name() const {
  return "revolve(c = " + std::to_string(snapshots_) + ")";
}

void RevolveSchedule::reset() {
  stack_.clear();
  current_ = 0;
  fine_ = steps_;
  pending_r_ = 0;
  pending_beta_ = 0;
  started_ = false;
  finished_ = false;
}

Action RevolveSchedule::next() {
  if (finished_) return Action::done();
  if (!started_) {  // y_0 takes the first slot
    started_ = true;
    stack_.push_back({0, repetitions_, beta_initial_});
    return Action::store(0, 0);
  }
  const int top = static_cast<int>(stack_.size()) - 1;
  if (top >= 0 && stack_.back().step == fine_) {  // its whole range is reversed
    const Index step = stack_.back().step;
    stack_.pop_back();
    return Action::free(top, step);
  }
  if (fine_ == 0) {  // everything reversed and freed
    finished_ = true;
    return Action::done();
  }
  if (current_ == fine_ - 1) {
    fine_ = current_;
    return Action::reverse(current_);
  }
  Entry& head = stack_.back();
  if (current_ != head.step) {
    if (current_ > head.step && current_ < fine_ - 1) {  // just advanced to a split point
      stack_.push_back({current_, pending_r_, pending_beta_});
      return Action::store(top + 1, current_);
    }
    current_ = head.step;  // a reverse ended the range above: back to its start
    return Action::restore(top, current_);
  }

  // Split [s, e) = [current_, fine_), e − s ≥ 2, held in slot `top` with c' snapshots.
  const Index length = fine_ - current_;
  const Index c = static_cast<Index>(snapshots_) - top;  // c' ≥ 1
  const Index r = head.r;                                // β(c', r − 1) < length ≤ β(c', r)
  const Index b1 = head.beta;                            // β(c', r − 1)
  // β(c' − 1, r − 1) = β(c', r − 1)·c'/(c' + r − 1). (c' + r stays far from overflow: r ≈ l only
  // when c' = 1, and r = O(√l) or less otherwise.)
  const Index b2 = detail::mul_div_exact(b1, c, c + r - 1, "revolve beta(c - 1, r - 1)");
  Index jump = 0, right = 0;
  if (length - b1 >= b2) {  // left part as long as r − 1 repetitions allow
    jump = b1;
    right = length - b1;  // ≤ β(c' − 1, r): repetitions r, or r − 1 if = b2
  } else {                // right part exactly β(c' − 1, r − 1)
    jump = length - b2;
    right = b2;
  }
  if (right >= 2) {  // the right part [s + jump, e) gets a snapshot: its (r, β(c' − 1, r − 1))
    if (right > b2) {
      pending_r_ = r;
      pending_beta_ = b2;
    } else {  // repetitions r − 1 ≥ 1 and c' − 1 ≥ 1 here: β(c' − 1, r − 2)
      pending_r_ = r - 1;
      pending_beta_ = detail::mul_div_exact(b2, r - 1, c + r - 2, "revolve beta(c - 1, r - 2)");
    }
  }
  // The left part [s, s + jump) is reversed later with c' snapshots and exactly r − 1 repetitions.
  head.beta = detail::mul_div_exact(b1, r - 1, c + r - 1, "revolve beta(c, r - 2)");
  head.r = r - 1;
  current_ += jump;
  return Action::advance(current_);
}

}  // namespace rwd
