// python/src/schedules.cpp — rewind's schedules (rewind/schedule/*.hpp) as Python iterables of
// Actions, so that a time loop written in Python drives its own checkpointing:
//
//   schedule = rewind.RevolveSchedule(steps=1000, snapshots=10)
//   for action in schedule:                 # Actions up to (not including) done
//       ...                                 # advance, store, restore, reverse, free
//
// A Schedule is its own iterator (as a file is): iterating goes on from where it is, and reset()
// starts it again; actions() gives a fresh copy's whole stream as a NumPy array instead. The
// constructors refuse bad arguments with the library's messages (rewind.InvalidArgument).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "bindings.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/stage_aware_schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/store_all_stages_schedule.hpp"
#include "rewind/schedule/three_level_schedule.hpp"
#include "rewind/schedule/uniform_schedule.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rwd::python {
namespace {

using ActionTable = nb::ndarray<nb::numpy, std::int64_t, nb::ndim<2>>;

// Every action of a fresh copy of `schedule`, done excluded, as rows (kind, step, slot).
ActionTable action_table(const Schedule& schedule) {
  const std::unique_ptr<Schedule> copy = schedule.clone();
  auto* rows = new std::vector<std::int64_t>();
  nb::capsule owner(rows,
                    [](void* p) noexcept { delete static_cast<std::vector<std::int64_t>*>(p); });
  for (Action a = copy->next(); a.kind != ActionKind::done; a = copy->next())
    rows->insert(rows->end(), {static_cast<std::int64_t>(a.kind), a.step, a.slot});
  return ActionTable(rows->data(), {rows->size() / 3, 3}, owner);
}

Action next_or_stop(Schedule& schedule) {
  const Action a = schedule.next();
  if (a.kind == ActionKind::done) throw nb::stop_iteration();
  return a;
}

// revolve: c > l snapshots is a request that cannot be met as stated (at most l states exist to
// be held), which the library quietly takes as min(c, l); from Python it is refused as the likely
// mistake it is (an argument order swapped, a budget meant for another run).
void refuse_more_snapshots_than_steps(const char* name, Index steps, Index snapshots) {
  if (steps >= 1 && snapshots > steps)
    detail::fail<InvalidArgument>(name, ": snapshots c = ", snapshots,
                                  " is more than steps l = ", steps,
                                  "; a run of l steps has at most l states to hold (c <= l)");
}

void bind_base(nb::module_& m) {
  nb::class_<Schedule>(
      m, "Schedule",
      "A checkpointing schedule: a stream of Actions for `steps` steps with `slots` snapshot "
      "slots (rewind/schedule/schedule.hpp). Iterating gives the actions up to done; the schedule "
      "is its own iterator, so a second loop goes on where the first stopped (reset() starts "
      "again).")
      .def("next", &Schedule::next, "The next action; done (and done again) at the end.")
      .def(
          "__iter__", [](nb::handle self) { return self; },
          nb::sig("def __iter__(self) -> Schedule"))
      .def("__next__", &next_or_stop)
      .def_prop_ro("steps", &Schedule::steps,
                   "l: the steps reversed (0 .. l-1; the final state is y_l); -1 for an online "
                   "schedule before end_at.")
      .def_prop_ro("slots", &Schedule::slots,
                   "The snapshot budget c: slots lie in [0, c); y_0's snapshot counts.")
      .def_prop_ro("memory_slots", &Schedule::memory_slots,
                   "Slots [0, memory_slots) are in memory, the rest on disk.")
      .def_prop_ro("host_slots", &Schedule::host_slots,
                   "Three levels: the last host_slots of the memory slots are host memory.")
      .def_prop_ro("stage_units", &Schedule::stage_units,
                   "Slots one stage snapshot takes; 0 for schedules that keep states only.")
      .def_prop_ro("name", &Schedule::name, "E.g. 'revolve(c = 20)'.")
      .def("reset", &Schedule::reset, "Back to the first action.")
      .def("clone", &Schedule::clone, "A second instance of the same schedule at its first action.")
      .def("actions", &action_table,
           "The whole stream of a fresh copy (this one is not moved), done excluded, as an int64 "
           "array of shape (n, 3): columns kind (int(ActionKind)), step, slot.")
      .def("__repr__", [](const Schedule& s) { return "<rewind schedule " + s.name() + ">"; });
}

void bind_offline(nb::module_& m) {
  nb::class_<RevolveSchedule, Schedule>(
      m, "RevolveSchedule",
      "Griewank & Walther's optimal binomial checkpointing (ACM TOMS 26(1), 2000): reverses l "
      "steps with c snapshots (y_0's included) in the fewest forward steps, "
      "revolve_advances(l, c).")
      .def(
          "__init__",
          [](RevolveSchedule* self, Index steps, Index snapshots) {
            refuse_more_snapshots_than_steps("revolve", steps, snapshots);
            new (self) RevolveSchedule(steps, to_int(snapshots, "revolve: snapshots c"));
          },
          "steps"_a, "snapshots"_a)
      .def_prop_ro("repetitions", &RevolveSchedule::repetitions,
                   "r(l, c): the most times any step is advanced.");

  nb::enum_<SegmentReplay>(m, "SegmentReplay", "How a uniform schedule replays a segment.")
      .value("store_states", SegmentReplay::store_states,
             "Replay once, keeping the segment's states in extra slots (CVODES' way).")
      .value("recompute", SegmentReplay::recompute,
             "Replay from the segment's snapshot for every step: no extra slots.");

  nb::class_<UniformSchedule, Schedule>(
      m, "UniformSchedule",
      "Equidistant checkpoints every `interval` steps, as CVODES places them "
      "(rewind/schedule/uniform_schedule.hpp).")
      .def(nb::init<Index, Index, SegmentReplay>(), "steps"_a, "interval"_a,
           "replay"_a = SegmentReplay::store_states)
      .def_prop_ro("interval", &UniformSchedule::interval)
      .def_prop_ro("segments", &UniformSchedule::segments, "ceil(l / interval).")
      .def_prop_ro("replay", &UniformSchedule::replay)
      .def_prop_ro("predicted_advances", &UniformSchedule::predicted_advances,
                   "The closed form of the advances.")
      .def_prop_ro("predicted_stores", &UniformSchedule::predicted_stores,
                   "The closed form of the stores.");

  nb::class_<StoreAllSchedule, Schedule>(
      m, "StoreAllSchedule", "Keeps every state y_0 .. y_{l-1}: l slots, nothing recomputed.")
      .def(nb::init<Index>(), "steps"_a);
}

void bind_levels(nb::module_& m) {
  nb::class_<MultiLevelSchedule, Schedule>(
      m, "MultiLevelSchedule",
      "Two levels: memory snapshots in front of disk snapshots, placed to minimise the "
      "predicted time under `costs` (rewind/schedule/multilevel_schedule.hpp; Stumm & Walther "
      "2009, Aupy et al. 2016). Slots [0, memory) are memory, the rest disk.")
      .def(
          "__init__",
          [](MultiLevelSchedule* self, Index steps, Index memory, Index disk,
             const CostModel& costs) {
            new (self) MultiLevelSchedule(steps, to_int(memory, "two-level: memory snapshots"),
                                          to_int(disk, "two-level: disk snapshots"), costs);
          },
          "steps"_a, "memory_snapshots"_a, "disk_snapshots"_a, "costs"_a)
      .def_prop_ro("predicted_time", &MultiLevelSchedule::predicted_time,
                   "predicted_time(simulate(self), costs).")
      .def_prop_ro("predicted_cost", &MultiLevelSchedule::predicted_cost,
                   "The counts the plan makes (peaks and actions not predicted: 0).")
      .def_prop_ro("costs", &MultiLevelSchedule::costs)
      .def_prop_ro("exact", &MultiLevelSchedule::exact,
                   "Whether the exact dynamic program planned it.");

  nb::class_<ThreeLevelSchedule, Schedule>(
      m, "ThreeLevelSchedule",
      "Three levels — device, host, disk (H-Revolve's model, Herrmann & Pallez 2020): slots "
      "[0, device) device, then host, then disk (rewind/schedule/three_level_schedule.hpp). "
      "costs.write_time/read_time are the device level's.")
      .def(
          "__init__",
          [](ThreeLevelSchedule* self, Index steps, Index device, Index host, Index disk,
             const CostModel& costs) {
            new (self) ThreeLevelSchedule(steps, to_int(device, "three-level: device snapshots"),
                                          to_int(host, "three-level: host snapshots"),
                                          to_int(disk, "three-level: disk snapshots"), costs);
          },
          "steps"_a, "device_snapshots"_a, "host_snapshots"_a, "disk_snapshots"_a, "costs"_a)
      .def_prop_ro("device_slots", &ThreeLevelSchedule::device_slots)
      .def_prop_ro("disk_slots", &ThreeLevelSchedule::disk_slots)
      .def_prop_ro("predicted_time", &ThreeLevelSchedule::predicted_time)
      .def_prop_ro("predicted_cost", &ThreeLevelSchedule::predicted_cost)
      .def_prop_ro("costs", &ThreeLevelSchedule::costs);

  nb::class_<DiskOnlySchedule, Schedule>(
      m, "DiskOnlySchedule",
      "A copy of another schedule (at its first action) with every slot on the disk level: the "
      "same actions, memory_slots = 0.")
      .def(
          "__init__",
          [](DiskOnlySchedule* self, const Schedule& inner) {
            new (self) DiskOnlySchedule(inner.clone());
          },
          "schedule"_a);
}

void bind_stages(nb::module_& m) {
  nb::class_<StageAwareSchedule, Schedule>(
      m, "StageAwareSchedule",
      "The optimal offline schedule when a snapshot may hold a step's stage values (CAMS, Zhang "
      "& Constantinescu 2023): the budget counts state-sized units, a stage snapshot takes "
      "`stage_units` of them (an explicit Runge-Kutta method's stage count) and its step is "
      "reversed with nothing re-run (rewind/schedule/stage_aware_schedule.hpp).")
      .def(
          "__init__",
          [](StageAwareSchedule* self, Index steps, Index units, Index stage_units) {
            new (self)
                StageAwareSchedule(steps, to_int(units, "stage-aware schedule: units c"),
                                   to_int(stage_units, "stage-aware schedule: stage units u"));
          },
          "steps"_a, "units"_a, "stage_units"_a)
      .def_prop_ro("extra_evaluations", &StageAwareSchedule::extra_evaluations,
                   "The optimum: forward evaluations beyond l.");

  nb::class_<StoreAllStagesSchedule, Schedule>(
      m, "StoreAllStagesSchedule",
      "Keeps the stages of every step: l * stage_units slots, l forward evaluations in all.")
      .def(
          "__init__",
          [](StoreAllStagesSchedule* self, Index steps, Index stage_units) {
            new (self) StoreAllStagesSchedule(steps, to_int(stage_units, "store-all-stages: u"));
          },
          "steps"_a, "stage_units"_a);
}

void bind_online(nb::module_& m) {
  nb::enum_<OnlineRule>(m, "OnlineRule",
                        "What the online schedule does once a run is longer than beta(c, 3).")
      .value("least_worst_case", OnlineRule::least_worst_case,
             "The lower worst case against offline revolve (at most 1.06x for c >= 4).")
      .value("never_above_dynamic", OnlineRule::never_above_dynamic,
             "Never more advances than Wang, Moin & Iaccarino's dynamic checkpointing.");

  nb::class_<OnlineSchedule, Schedule>(
      m, "OnlineSchedule",
      "Binomial checkpointing for a run whose length is known only when it stops "
      "(rewind/schedule/online_schedule.hpp). Forward phase: compute y_{n+1} first; if it is "
      "final, call end_at(n + 1) before asking for the next action; otherwise take actions (a "
      "free and a store of y_n at most) up to `advance to n + 1`, and make y_{n+1} current. "
      "After end_at, the actions reverse the run.")
      .def(
          "__init__",
          [](OnlineSchedule* self, Index snapshots, OnlineRule rule) {
            new (self) OnlineSchedule(to_int(snapshots, "online: snapshots c"), rule);
          },
          "snapshots"_a, "rule"_a = OnlineRule::least_worst_case)
      .def("end_at", &OnlineSchedule::end_at, "steps"_a,
           "The run stopped at y_l (l = steps = forward_step + 1).")
      .def_prop_ro("ended", &OnlineSchedule::ended)
      .def_prop_ro("forward_step", &OnlineSchedule::forward_step,
                   "The step n of the current state y_n in the forward phase.")
      .def(
          "actions",
          [](const OnlineSchedule& s) -> ActionTable {
            detail::fail<InvalidArgument>(
                s.name(),
                ": actions() needs a length known in advance; an online schedule's stream "
                "depends on when end_at is called (simulate_online(snapshots, steps) counts one)");
          },
          "Refused: an online schedule's stream is known only as the run goes.");
}

}  // namespace

void bind_schedules(nb::module_& m) {
  bind_base(m);
  bind_offline(m);
  bind_levels(m);
  bind_stages(m);
  bind_online(m);
}

}  // namespace rwd::python
