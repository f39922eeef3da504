// python/src/planning.cpp — planning from a budget (rewind/schedule/checkpoint_plan.hpp,
// stage_plan_chooser.hpp, revolve_cost.hpp): PlanRequest, CheckpointPlan with its StorageLevels,
// plan_checkpoints, choose_stage_plan, and the Griewank–Walther closed forms.
//
//   plan = rewind.plan_checkpoints(rewind.PlanRequest.revolve(10), steps=1000)
//   plan.forward_steps         # 4636 = l + p(l, c)
//   for action in plan.schedule(): ...
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/schedule_registry.hpp"
#include "rewind/schedule/stage_plan_chooser.hpp"
#include "rewind/schedule/storage_level.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rwd::python {
namespace {

using OptionalIndex = std::optional<Index>;

void bind_levels(nb::module_& m) {
  nb::enum_<LevelKind>(m, "LevelKind", "What kind of store serves a storage level.")
      .value("memory", LevelKind::memory)
      .value("host", LevelKind::host)
      .value("disk", LevelKind::disk);

  nb::class_<StorageLevel>(
      m, "StorageLevel",
      "One storage level of a plan: its slots [first_slot, first_slot + slots) of the "
      "schedule's range and what the simulation counted there (None: unknown, closed forms).")
      .def_ro("kind", &StorageLevel::kind)
      .def_ro("name", &StorageLevel::name, "'memory', 'device', 'host' or 'disk'.")
      .def_ro("first_slot", &StorageLevel::first_slot)
      .def_ro("slots", &StorageLevel::slots, "The schedule's budget on this level.")
      .def_ro("slots_used", &StorageLevel::slots_used, "Slots a store must provide here.")
      .def_ro("stores", &StorageLevel::stores)
      .def_ro("restores", &StorageLevel::restores)
      .def_ro("peak_slots", &StorageLevel::peak_slots)
      .def("__repr__", [](const StorageLevel& l) {
        return "<StorageLevel " + l.name + ": slots [" + std::to_string(l.first_slot) + ", " +
               std::to_string(l.end_slot()) + "), " + std::to_string(l.slots_used) + " used>";
      });
}

void bind_request(nb::module_& m) {
  nb::class_<PlanRequest>(
      m, "PlanRequest",
      "What a run asks for: a schedule family (by name: revolve, uniform, store-all, two-level, "
      "three-level) and its budget. validate() and plan_checkpoints raise InvalidPlanRequest "
      "naming the field, the value and the rule.")
      .def(
          "__init__",
          [](PlanRequest* self, const std::string& family, OptionalIndex budget,
             OptionalIndex interval, OptionalIndex memory_slots, OptionalIndex disk_slots,
             OptionalIndex host_slots, const CostModel& costs, bool all_on_disk) {
            new (self) PlanRequest{&find_schedule_family(family),
                                   budget,
                                   interval,
                                   memory_slots,
                                   disk_slots,
                                   host_slots,
                                   costs,
                                   all_on_disk};
          },
          "family"_a = "revolve", nb::kw_only(), "budget"_a = nb::none(), "interval"_a = nb::none(),
          "memory_slots"_a = nb::none(), "disk_slots"_a = nb::none(), "host_slots"_a = nb::none(),
          "costs"_a = CostModel{}, "all_on_disk"_a = false)
      .def_static("revolve", &PlanRequest::revolve, "snapshots"_a)
      .def_static("uniform", &PlanRequest::uniform, "interval"_a)
      .def_static("store_all", &PlanRequest::store_all)
      .def_static("two_level", &PlanRequest::two_level, "memory_snapshots"_a, "disk_snapshots"_a,
                  "costs"_a)
      .def_static("three_level", &PlanRequest::three_level, "device_snapshots"_a,
                  "host_snapshots"_a, "disk_snapshots"_a, "costs"_a)
      .def_prop_rw(
          "family", [](const PlanRequest& r) { return r.family->name(); },
          [](PlanRequest& r, const std::string& name) { r.family = &find_schedule_family(name); },
          "The schedule family's name.")
      .def_rw("budget", &PlanRequest::budget, "c >= 1 snapshots (revolve, store-all, uniform).")
      .def_rw("interval", &PlanRequest::interval, "uniform: k >= 1.")
      .def_rw("memory_slots", &PlanRequest::memory_slots, "two-level memory, three-level device.")
      .def_rw("disk_slots", &PlanRequest::disk_slots)
      .def_rw("host_slots", &PlanRequest::host_slots)
      .def_rw("costs", &PlanRequest::costs)
      .def_rw("all_on_disk", &PlanRequest::all_on_disk)
      .def("validate", &PlanRequest::validate,
           "The rules that do not depend on l; raises InvalidPlanRequest.");
}

void bind_plan(nb::module_& m) {
  nb::class_<CheckpointPlan>(
      m, "CheckpointPlan",
      "A plan as a value: which schedule, what it costs, and the slots each storage level must "
      "provide. schedule() gives a fresh instance of the planned schedule.")
      .def_prop_ro("family", [](const CheckpointPlan& p) { return p.family->name(); })
      .def_ro("name", &CheckpointPlan::name)
      .def_ro("steps", &CheckpointPlan::steps)
      .def_ro("snapshots", &CheckpointPlan::snapshots, "The schedule's slot budget c.")
      .def_ro("budget", &CheckpointPlan::budget)
      .def_ro("interval", &CheckpointPlan::interval)
      .def_ro("interval_chosen", &CheckpointPlan::interval_chosen)
      .def_ro("repetitions", &CheckpointPlan::repetitions)
      .def_ro("simulated", &CheckpointPlan::simulated,
              "Counts from the simulator (else the closed forms).")
      .def_ro("advances", &CheckpointPlan::advances, "p: steps advanced by the schedule.")
      .def_ro("stores", &CheckpointPlan::stores, "None when unknown (revolve's closed form).")
      .def_ro("restores", &CheckpointPlan::restores)
      .def_ro("reverses", &CheckpointPlan::reverses)
      .def_ro("peak_slots", &CheckpointPlan::peak_slots)
      .def_ro("peak_exact", &CheckpointPlan::peak_exact)
      .def_ro("levels", &CheckpointPlan::levels, "Fastest first, tiling [0, snapshots).")
      .def_ro("costs", &CheckpointPlan::costs)
      .def_ro("stage_units", &CheckpointPlan::stage_units)
      .def_ro("stage_stores", &CheckpointPlan::stage_stores)
      .def_ro("stage_reverses", &CheckpointPlan::stage_reverses)
      .def_prop_ro("forward_steps", &CheckpointPlan::forward_steps,
                   "l + p: forward evaluations, the reverse steps' own re-runs included.")
      .def_prop_ro("recompute_ratio", &CheckpointPlan::recompute_ratio, "(l + p) / l.")
      .def("predicted_time_ratio", &CheckpointPlan::predicted_time_ratio, "adjoint_cost"_a,
           "Time of the gradient in forward runs of l steps.")
      .def_prop_ro("store_all_fits", &CheckpointPlan::store_all_fits)
      .def("schedule", &CheckpointPlan::schedule,
           "A fresh instance of the planned schedule, at its first action.")
      .def("__repr__", [](const CheckpointPlan& p) {
        return "<CheckpointPlan " + p.name + ": " + std::to_string(p.steps) + " steps, " +
               std::to_string(p.forward_steps()) + " forward steps>";
      });
}

void bind_closed_forms(nb::module_& m) {
  m.def("revolve_beta", &revolve_beta, "snapshots"_a, "repetitions"_a,
        "beta(c, r) = C(c + r, c): the most steps c snapshots reverse with no step advanced more "
        "than r times.");
  m.def("revolve_repetitions", &revolve_repetitions, "steps"_a, "snapshots"_a,
        "r(l, c): the smallest r with beta(c, r) >= l.");
  m.def("revolve_advances", &revolve_advances, "steps"_a, "snapshots"_a,
        "p(l, c) = r l - beta(c + 1, r - 1): the fewest steps advanced to reverse l steps with c "
        "snapshots (Griewank & Walther).");
  m.def("revolve_recompute_ratio", &revolve_recompute_ratio, "steps"_a, "snapshots"_a,
        "(l + p(l, c)) / l.");
  m.def("snapshots_for_budget", &snapshots_for_budget, "budget_bytes"_a, "bytes_per_snapshot"_a,
        "floor(budget / bytes per snapshot), capped at the largest int; refuses a budget that "
        "holds no snapshot.");
}

}  // namespace

void bind_planning(nb::module_& m) {
  bind_levels(m);
  bind_request(m);
  bind_plan(m);
  bind_closed_forms(m);
  m.def("plan_checkpoints", &plan_checkpoints, "request"_a, "steps"_a,
        "The plan of `request` for l steps, with its costs (simulated up to 10^8 steps, closed "
        "forms beyond).");
  m.def(
      "choose_stage_plan",
      [](Index steps, Index budget, Index stage_units, const CostModel& costs) {
        return choose_stage_plan(steps, budget, to_int(stage_units, "stage_units"), costs);
      },
      "steps"_a, "budget"_a, "stage_units"_a, "costs"_a = CostModel{},
      "The plan of least predicted time for a budget of state-sized slots that may also hold a "
      "step's stage values: revolve, stage-aware, store-all or store-all-stages.");
  m.def(
      "schedule_families",
      [](bool only_plannable) {
        std::vector<std::string> names;
        for (const ScheduleFamily* f : schedule_families())
          if (!only_plannable || !f->not_planned_from_requests()) names.push_back(f->name());
        return names;
      },
      "only_plannable"_a = false, "The registered schedule families' names.");
}

}  // namespace rwd::python
