// rewind/schedule/schedule.hpp — the interface of every checkpointing schedule.
//
// A Schedule is pure policy: integers in, Actions (rewind/schedule/action.hpp) out. It knows
// nothing about states, integrators or storage; the adjoint driver executes its actions and the
// schedule simulator (rewind/schedule/schedule_simulator.hpp) validates and costs them.
//
//   rwd::RevolveSchedule schedule(/*steps=*/100000, /*snapshots=*/20);
//   for (rwd::Action a = schedule.next(); a.kind != rwd::ActionKind::done; a = schedule.next())
//     execute(a);
//
// Implementations: StoreAllSchedule, UniformSchedule, RevolveSchedule (Griewank & Walther,
// ACM TOMS 26(1), 2000), MultiLevelSchedule, which places snapshots on two storage levels
// (memory_slots() below), and OnlineSchedule, for runs whose length is known only when they stop
// (its steps() is −1 until then; rewind/schedule/online_schedule.hpp). StageAwareSchedule and
// StoreAllStagesSchedule also keep the stage values of steps (stage_units() below).
#pragma once

#include <memory>
#include <string>

#include "rewind/schedule/action.hpp"
#include "rewind/types.hpp"

namespace rwd {

class Schedule {
 public:
  virtual ~Schedule() = default;

  // The next action; after `done`, done again on every call.
  virtual Action next() = 0;
  // l: the number of steps reversed (steps 0 .. l−1; the final state is y_l).
  virtual Index steps() const = 0;
  // The snapshot budget: slot indices lie in [0, slots()), and never more than slots() are held
  // at once. The initial state's snapshot counts, as in Griewank & Walther.
  virtual int slots() const = 0;
  // Two storage levels: slots [0, memory_slots()) are in memory, slots [memory_slots(), slots())
  // on disk, where a store and a restore cost a disk write and read. Single-level schedules keep
  // every slot in memory (the default).
  virtual int memory_slots() const { return slots(); }
  // Three storage levels (device, host, disk; ThreeLevelSchedule): the last host_slots() of the
  // memory slots, [memory_slots() − host_slots(), memory_slots()), are the host level, a slower
  // memory than the slots below them (a GPU's pinned host memory behind its device memory).
  // Every other schedule has none.
  virtual int host_slots() const { return 0; }
  // Slots one stage snapshot occupies (rewind/schedule/action.hpp: store_stages), or 0 for
  // schedules that keep states only (the default).
  virtual int stage_units() const { return 0; }
  // For summaries and messages, e.g. "revolve(c = 20)".
  virtual std::string name() const = 0;
  // Back to the first action.
  virtual void reset() = 0;
  // A second instance of the same schedule, at its first action, without planning it again
  // (e.g. the read-ahead scout that runs in front of the driver). Copies what the constructor
  // computed; never repeats it.
  virtual std::unique_ptr<Schedule> clone() const = 0;

 protected:
  Schedule() = default;
  Schedule(const Schedule&) = default;
  Schedule& operator=(const Schedule&) = default;
};

}  // namespace rwd
