// rewind/schedule/store_all_schedule.hpp — the reference schedule: keep every state.
//
//   rwd::StoreAllSchedule schedule(/*steps=*/1000);   // slots() == 1000
//   // store y_0 in 0, advance to 1, store y_1 in 1, …, advance to l−1, store y_{l−1} in l−1,
//   // reverse l−1, free l−1, restore l−2, reverse l−2, free l−2, …, reverse 0, free 0, done.
//
// Budget c = l slots (y_0 … y_{l−1}); l − 1 advances, none recomputed; l stores, l − 1 restores.
// (RevolveSchedule(l, l − 1) reaches the same l − 1 advances with one slot less: it does not
// store y_{l−1}, which the first reverse step uses as it stands.)
#pragma once

#include <memory>

#include <string>

#include "rewind/schedule/schedule.hpp"

namespace rwd {

class StoreAllSchedule final : public Schedule {
 public:
  // l ≥ 1, and l must fit in an int (it is the slot count). Throws InvalidArgument otherwise.
  explicit StoreAllSchedule(Index steps);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return static_cast<int>(steps_); }
  std::string name() const override { return "store-all"; }
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<StoreAllSchedule>(*this);
    copy->reset();
    return copy;
  }

 private:
  Index steps_;
  Index current_ = 0;          // step of the current state
  Index adjoint_ = 0;          // the adjoint is at this step
  bool stored_ = false;        // forward sweep: the current state is stored
  bool pending_free_ = false;  // reverse sweep: the slot of the step just reversed is to be freed
  bool finished_ = false;
};

}  // namespace rwd
