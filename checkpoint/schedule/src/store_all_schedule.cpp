// StoreAllSchedule (rewind/schedule/store_all_schedule.hpp): a tiny state machine, O(1) memory.
#include "rewind/schedule/store_all_schedule.hpp"

#include <limits>

#include "rewind/error.hpp"

namespace rwd {

StoreAllSchedule::StoreAllSchedule(Index steps) : steps_(steps) {
  if (steps < 1) detail::fail<InvalidArgument>("store-all: steps l = ", steps, " must be >= 1");
  if (steps > std::numeric_limits<int>::max())
    detail::fail<InvalidArgument>("store-all: steps l = ", steps,
                                  " needs one slot per step, more than an int can count (",
                                  std::numeric_limits<int>::max(), ")");
  reset();
}

void StoreAllSchedule::reset() {
  current_ = 0;
  adjoint_ = steps_;
  stored_ = false;
  pending_free_ = false;
  finished_ = false;
}

Action StoreAllSchedule::next() {
  if (finished_) return Action::done();
  if (adjoint_ == steps_) {  // forward sweep: store y_n in slot n, then advance
    if (!stored_) {
      stored_ = true;
      return Action::store(static_cast<int>(current_), current_);
    }
    if (current_ < steps_ - 1) {
      ++current_;
      stored_ = false;
      return Action::advance(current_);
    }
  }
  if (pending_free_) {
    pending_free_ = false;
    return Action::free(static_cast<int>(adjoint_), adjoint_);
  }
  if (adjoint_ == 0) {
    finished_ = true;
    return Action::done();
  }
  if (current_ != adjoint_ - 1) {
    current_ = adjoint_ - 1;
    return Action::restore(static_cast<int>(current_), current_);
  }
  --adjoint_;
  pending_free_ = true;
  return Action::reverse(current_);
}

}  // namespace rwd
