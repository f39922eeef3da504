// rewind/schedule/three_level_schedule.hpp — checkpointing on three storage levels: a few
// snapshots in device memory, more in (pinned) host memory, the rest on disk, placed to minimise
// the predicted time of the adjoint.
//
//   rwd::CostModel costs{.adjoint_cost_factor = 2.0,
//                        .write_time = 0.01, .read_time = 0.01,        // device ↔ device copy
//                        .disk_write_time = 20, .disk_read_time = 20,  // HDF5 file
//                        .host_write_time = 0.5, .host_read_time = 0.5};  // PCIe copy; in steps
//   rwd::ThreeLevelSchedule schedule(/*steps=*/100000, /*device=*/4, /*host=*/64, /*disk=*/1000,
//                                    costs);
//   // slots [0, 4) device, [4, 68) host (host_slots() = 64), [68, 1068) disk (memory_slots() = 68)
//   schedule.predicted_time();  // == rwd::predicted_time(rwd::simulate(schedule), costs)
//
// Why: a GPU run keeps its state in device memory, where a snapshot copy is almost free but room
// is short; pinned host memory holds many more at PCIe speed; the disk holds any number but each
// write and read is slow. The model is that of H-Revolve (Herrmann & Pallez, "H-Revolve: a
// framework for adjoint computation on synchronous hierarchical platforms", ACM TOMS 46(2),
// 2020): each level has its slot count and its write and read cost, a step and an adjoint step
// have theirs, and the schedule minimises
//   T = step·(advances + l·(1 + adjoint factor)) + Σ_level (write_level·stores_level
//       + read_level·restores_level)
// — exactly rwd::predicted_time of its simulated cost (rewind/schedule/schedule_simulator.hpp).
//
// The plan is a composition of rewind's two-level plan (rewind/schedule/multilevel_schedule.hpp)
// with revolve, the better of two kinds by exact predicted time:
//  * device + disk: MultiLevelSchedule(l, device, disk) with the device level as its memory; the
//    host level is unused. This is what H = 0 gives.
//  * nested(k): the run cut into L = ⌈l/k⌉ super-steps of k steps (the last l − (L − 1)·k);
//    MultiLevelSchedule over the super-steps with the host level as its memory and the disk
//    level, costed with a super-step as k steps and its reverse as the device revolve over it;
//    each super-step reversed by revolve with the device snapshots from its first state (stored
//    into device slot 0 — a copy of the host or disk snapshot the super-step level holds).
//    k = 1 uses no device snapshot: the two-level plan on host and disk, what K = 0 gives.
//    k: every k ≤ 16, then 10 % apart up to l, screened by a closed-form estimate (the super-step
//    level planned by the two-level super-step plan alone); the best three and k = 1 are then
//    planned in full and costed exactly from their counts.
// What is optimal and what is not:
//  * With K = 0 or H = 0 the plan is the two-level plan of the two non-empty levels (no worse
//    than it: tests check it), exact within the two-level family where that is exact.
//  * For fixed k, the super-step level is the two-level plan's optimum (or its approximation past
//    its exact table) for equal super-steps under the model above — exact when l is a multiple
//    of k; the last, shorter super-step is costed as a full one while planning (the predicted
//    time reported is exact all the same). Inside a super-step, device revolve minimises advances
//    (optimal when device copies are free).
//  * Not the optimum of the recursive three-level family: split points of the super-step level
//    lie on multiples of k, the device level is used only inside super-steps, and device
//    snapshots are never placed above the host ones. Tests compare with an exhaustive search
//    over every action sequence for l ≤ 6 (a true optimum): the plan is within a few per cent
//    there, never below it.
//
// Planning cost: five two-level plans (device + disk, and four over super-steps) plus the screen:
// measured times in bench/results/code_comments.md; then O(1) amortised per
// action, memory O(depth) plus the two-level plan's table.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/three_level_plan.hpp"

namespace rwd {

class ThreeLevelSchedule final : public Schedule {
 public:
  // l ≥ 1 steps; device, host, disk ≥ 0 snapshots (each at most detail::kMaxLevelSnapshots) with
  // device + host ≥ 1 (the state being replayed is held in memory); costs valid
  // (CostModel::validate; write_time/read_time are the device level's). Throws InvalidArgument
  // naming the value otherwise. Plans in the constructor.
  ThreeLevelSchedule(Index steps, int device_snapshots, int host_snapshots, int disk_snapshots,
                     const CostModel& costs);

  Action next() override;
  Index steps() const override { return plan_->steps; }
  int slots() const override { return plan_->device + plan_->host + plan_->disk; }
  int memory_slots() const override { return plan_->device + plan_->host; }
  int host_slots() const override { return plan_->host; }
  int device_slots() const { return plan_->device; }
  int disk_slots() const { return plan_->disk; }
  std::string name() const override;  // "three-level(device = 4, host = 64, disk = 1000)"
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    return std::unique_ptr<Schedule>(new ThreeLevelSchedule(plan_, costs_));
  }

  // rwd::predicted_time(predicted_cost(), costs()) = rwd::predicted_time(rwd::simulate(*this),
  // costs()).
  double predicted_time() const { return plan_->predicted_time; }
  // Advances, stores, restores (and their host and disk parts), reverses, frees, first-sweep
  // advances. Peaks and the number of actions are not predicted (0).
  const ScheduleCost& predicted_cost() const { return plan_->counts; }
  const CostModel& costs() const { return costs_; }
  const detail::ThreeLevelPlan& plan() const { return *plan_; }

 private:
  ThreeLevelSchedule(std::shared_ptr<const detail::ThreeLevelPlan> plan, const CostModel& costs);
  Action next_nested();
  RevolveSchedule* active_leaf();

  std::shared_ptr<const detail::ThreeLevelPlan> plan_;
  CostModel costs_;
  std::unique_ptr<Schedule> outer_;           // a fresh copy of plan_->outer
  std::optional<RevolveSchedule> leaf_;       // nested: device revolve over k steps
  std::optional<RevolveSchedule> last_leaf_;  // over the last super-step, when shorter than k
  int active_ = 0;                            // 0: none, 1: leaf_, 2: last_leaf_
  Index leaf_start_ = 0;
};

}  // namespace rwd
