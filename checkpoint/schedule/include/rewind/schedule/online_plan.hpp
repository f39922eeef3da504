// rewind/schedule/online_plan.hpp — the online schedule seen after the fact: what a run that
// ended at l cost, as a plan like any other (for reports and `rewind plan --online`).
//
//   rwd::CheckpointPlan plan = rwd::plan_online(/*snapshots=*/20, /*steps=*/5000);
//   plan.advances;     // the online schedule's recomputation for a run that stopped at 5000
//   plan.advances - rwd::revolve_advances(5000, 20);   // its price for not knowing l
//
// OnlineScheduleEndingAt plays rwd::OnlineSchedule(c) for a run known to stop at l: the same
// actions, with end_at(l) called where the driver would call it (with y_{l−1} current, before any
// action for it), so it is an ordinary offline Schedule that CheckpointPlan::of simulates and
// validates.
#pragma once

#include <memory>
#include <string>

#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedule.hpp"

namespace rwd {

class OnlineScheduleEndingAt final : public Schedule {
 public:
  // c >= 1 snapshots, l >= 1 steps; InvalidArgument otherwise.
  OnlineScheduleEndingAt(int snapshots, Index steps,
                         OnlineRule rule = OnlineRule::least_worst_case);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return online_.slots(); }
  std::string name() const override { return online_.name(); }
  void reset() override { online_.reset(); }
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<OnlineScheduleEndingAt>(*this);
    copy->reset();
    return copy;
  }

 private:
  OnlineSchedule online_;
  Index steps_;
};

// The plan of OnlineSchedule(c) for a run that ended at l (kind ScheduleKind::online, simulated);
// on_disk: its snapshots all in the disk level (rwd::on_disk of an online planner).
CheckpointPlan plan_online(int snapshots, Index steps,
                           OnlineRule rule = OnlineRule::least_worst_case, bool on_disk = false);

}  // namespace rwd
