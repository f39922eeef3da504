// StoreAllStagesSchedule (rewind/schedule/store_all_stages_schedule.hpp): O(1) memory.
#include "rewind/schedule/store_all_stages_schedule.hpp"

#include <limits>

#include "rewind/error.hpp"

namespace rwd {

StoreAllStagesSchedule::StoreAllStagesSchedule(Index steps, int stage_units)
    : steps_(steps), stage_units_(stage_units) {
  if (steps < 1)
    detail::fail<InvalidArgument>("store-all-stages: steps l = ", steps, " must be >= 1");
  if (stage_units < 1)
    detail::fail<InvalidArgument>("store-all-stages: stage units u = ", stage_units,
                                  " must be >= 1");
  if (steps > std::numeric_limits<int>::max() / stage_units)
    detail::fail<InvalidArgument>("store-all-stages: l·u = ", steps, "·", stage_units,
                                  " slots, more than an int can count (",
                                  std::numeric_limits<int>::max(), ")");
  reset();
}

void StoreAllStagesSchedule::reset() {
  stored_ = 0;
  adjoint_ = steps_;
  pending_free_ = false;
  finished_ = false;
}

Action StoreAllStagesSchedule::next() {
  if (finished_) return Action::done();
  if (stored_ < steps_) {
    const Index n = stored_++;
    return Action::store_stages(slot_of(n), n);
  }
  if (pending_free_) {
    pending_free_ = false;
    return Action::free(slot_of(adjoint_), adjoint_);
  }
  if (adjoint_ == 0) {
    finished_ = true;
    return Action::done();
  }
  --adjoint_;
  pending_free_ = true;
  return Action::reverse_from_stages(adjoint_, slot_of(adjoint_));
}

}  // namespace rwd
