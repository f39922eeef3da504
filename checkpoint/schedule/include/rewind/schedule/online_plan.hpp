// rewind/schedule/online_plan.hpp — the online schedule seen after the fact: what a run that
// ended at l cost, as a plan like any other (for reports), and against offline revolve, which
// knows l in advance (for `rewind plan --online`).
//
//   rwd::CheckpointPlan plan = rwd::plan_online(/*snapshots=*/20, /*steps=*/5000);
//   plan.advances;     // the online schedule's recomputation for a run that stopped at 5000
//   plan.advances - rwd::revolve_advances(5000, 20);   // its price for not knowing l
//
//   rwd::OnlineComparison c = rwd::compare_online_with_offline(20, 5000);
//   c.ratio_to_offline();   // p_online / p(l, c)
//   c.region;               // which guarantee applies: l <= β(c, 2), up to β(c, 3), or beyond
//
// OnlineScheduleEndingAt plays rwd::OnlineSchedule(c) for a run known to stop at l: the same
// actions, with end_at(l) called where the driver would call it (with y_{l−1} current, before any
// action for it), so it is an ordinary offline Schedule that CheckpointPlan::of simulates and
// validates.
#pragma once

#include <memory>
#include <string>

#include "rewind/schedule/schedule_simulator.hpp"

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

// The plan of OnlineSchedule(c) for a run that ended at l (family rwd::online_family(), simulated);
// on_disk: its snapshots all in the disk level (rwd::on_disk of an online planner).
CheckpointPlan plan_online(int snapshots, Index steps,
                           OnlineRule rule = OnlineRule::least_worst_case, bool on_disk = false);

// Where l lies against the online schedule's guarantees (rewind/schedule/online_placement.hpp),
// with β(c, r) = C(c + r, c): l <= β(c, 2), where it recomputes as offline revolve does;
// β(c, 2) < l <= β(c, 3), where it stays within revolve's repetition count r = 3; and beyond,
// where its rule (OnlineRule) decides.
enum class OnlineRegion { up_to_beta2, up_to_beta3, beyond_beta3 };

// "r <= 2", "r = 3", "r > 3".
const char* online_region_name(OnlineRegion region);

// What OnlineSchedule(c) costs for a run that ends at l, against offline revolve's minimum.
struct OnlineComparison {
  std::string name;           // "online(c = 20)", the schedule's name
  ScheduleCost cost;          // of the validated action stream (rwd::simulate_online)
  Index offline_advances;     // p(l, c), revolve's minimum
  Index offline_repetitions;  // r(l, c)
  Index beta2;                // β(c, 2)
  Index beta3;                // β(c, 3)
  OnlineRegion region;

  // (l + p) / l, p the online schedule's advances.
  double recompute_ratio() const;
  // p / p(l, c); 1 when revolve needs no recomputation either.
  double ratio_to_offline() const;
  // (p + l·(1 + F)) / l: the gradient's time in forward runs, with free snapshot copies and the
  // adjoint part of a reverse step F = adjoint_cost forward steps.
  double predicted_time_ratio(double adjoint_cost) const;
};

// The online schedule with c >= 1 snapshots, simulated action by action for a run that ends at
// l >= 1 steps (O(l) work, a few actions a step: bench/results/code_comments.md), and revolve's
// closed forms for the same l and c. InvalidArgument for c < 1 or l < 1.
OnlineComparison compare_online_with_offline(int snapshots, Index steps,
                                             OnlineRule rule = OnlineRule::least_worst_case);

}  // namespace rwd
