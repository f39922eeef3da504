// rewind/schedule/store_all_stages_schedule.hpp — keep the stages of every step, so that the
// reverse sweep recomputes nothing: the gradient costs one forward run plus the adjoint parts.
//
//   rwd::StoreAllStagesSchedule schedule(/*steps=*/1000, /*stage_units=*/4);   // RK4: 4000 slots
//   // store stages of step 0 in slot 0, … of step l−1 in slot (l−1)·u (the state is then y_l),
//   // reverse l−1 with the stages in slot (l−1)·u, free it, …, reverse 0 with the stages in 0.
//
// Budget c = l·u slots (u = stage_units, rewind/schedule/stage_aware_schedule.hpp says what a
// stage snapshot holds); l forward evaluations in all (ScheduleCost::forward_evaluations), against
// store-all's 2l − 1 (every reverse re-runs its step). No state is ever stored or restored.
#pragma once

#include <memory>
#include <string>

#include "rewind/schedule/schedule.hpp"

namespace rwd {

class StoreAllStagesSchedule final : public Schedule {
 public:
  // l ≥ 1, u ≥ 1, and l·u must fit in an int (the slot count). Throws InvalidArgument otherwise.
  StoreAllStagesSchedule(Index steps, int stage_units);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return static_cast<int>(steps_) * stage_units_; }
  int stage_units() const override { return stage_units_; }
  std::string name() const override { return "store-all-stages"; }
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<StoreAllStagesSchedule>(*this);
    copy->reset();
    return copy;
  }

 private:
  int slot_of(Index step) const { return static_cast<int>(step) * stage_units_; }

  Index steps_;
  int stage_units_;
  Index stored_ = 0;           // forward sweep: steps whose stages are stored
  Index adjoint_ = 0;          // reverse sweep: the adjoint is at this step
  bool pending_free_ = false;  // the stages of the step just reversed are to be freed
  bool finished_ = false;
};

}  // namespace rwd
