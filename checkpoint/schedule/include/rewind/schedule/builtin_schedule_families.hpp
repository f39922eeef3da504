// rewind/schedule/builtin_schedule_families.hpp — the schedule families rewind ships, each one
// class in checkpoint/schedule/src/families/ and registered under its name
// (rewind/schedule/schedule_registry.hpp). A request or a plan refers to one by address:
//
//   rwd::PlanRequest request;                       // revolve by default
//   request.family = &rwd::uniform_family();
//   request.interval = 32;
//   plan.family->name();                            // "uniform"
//
// Each lives as long as the program (a function-local static), so a pointer to it never dangles.
#pragma once

namespace rwd {

class ScheduleFamily;

// Binomial checkpointing (Griewank & Walther's revolve): the fewest recomputations for a budget
// of c snapshots. Takes a budget. rewind/schedule/revolve_schedule.hpp.
const ScheduleFamily& revolve_family();
// A snapshot every k steps (the interval, or chosen from a budget). uniform_schedule.hpp.
const ScheduleFamily& uniform_family();
// Every state y_0 … y_{l−1}: no recomputation. An optional budget it must fit in.
const ScheduleFamily& store_all_family();
// K snapshots in memory and D on disk, placed under the disk's costs. multilevel_schedule.hpp.
const ScheduleFamily& two_level_family();
// Device, host and disk snapshots, placed under each level's costs. three_level_schedule.hpp.
const ScheduleFamily& three_level_family();
// A schedule a user wrote, planned with CheckpointPlan::of (not from a request); also the
// stage-aware schedules of rwd::choose_stage_plan.
const ScheduleFamily& custom_family();
// rwd::OnlineSchedule, for runs of unknown length; rwd::plan_online describes one that ended.
const ScheduleFamily& online_family();

}  // namespace rwd
