// python/src/simulator.cpp — the schedule simulator (rewind/schedule/schedule_simulator.hpp):
// ScheduleCost (what a schedule costs, per level), CostModel (time per operation),
// ScheduleValidator (checks a stream one action at a time), simulate and simulate_online, and
// the predicted time.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rwd::python {
namespace {

// The counts as a dict, field name to value, for tables and reports.
nb::dict cost_dict(const ScheduleCost& c) {
  nb::dict d;
  d["steps"] = c.steps;
  d["slots"] = c.slots;
  d["advances"] = c.advances;
  d["first_sweep_advances"] = c.first_sweep_advances;
  d["recomputed_steps"] = c.recomputed_steps;
  d["forward_evaluations"] = c.forward_evaluations();
  d["stores"] = c.stores;
  d["restores"] = c.restores;
  d["reverses"] = c.reverses;
  d["frees"] = c.frees;
  d["peak_slots"] = c.peak_slots;
  d["actions"] = c.actions;
  d["disk_slots"] = c.disk_slots;
  d["disk_stores"] = c.disk_stores;
  d["disk_restores"] = c.disk_restores;
  d["peak_disk_slots"] = c.peak_disk_slots;
  d["memory_slots_used"] = c.memory_slots_used;
  d["disk_slots_used"] = c.disk_slots_used;
  d["host_slots"] = c.host_slots;
  d["host_stores"] = c.host_stores;
  d["host_restores"] = c.host_restores;
  d["peak_host_slots"] = c.peak_host_slots;
  d["host_slots_used"] = c.host_slots_used;
  d["stage_units"] = c.stage_units;
  d["stage_stores"] = c.stage_stores;
  d["stage_reverses"] = c.stage_reverses;
  return d;
}

// rwd::simulate resets the schedule and runs it to done; from Python it costs a copy, so that a
// loop that simulates and then iterates still sees every action.
ScheduleCost simulate_copy(const Schedule& schedule, Index max_actions) {
  if (dynamic_cast<const OnlineSchedule*>(&schedule) != nullptr)
    detail::fail<InvalidArgument>(
        "simulate: ", schedule.name(),
        " has no length until end_at; simulate_online(snapshots, steps) costs a run of l steps");
  const std::unique_ptr<Schedule> copy = schedule.clone();
  return simulate(*copy, SimulatorOptions{.max_actions = max_actions});
}

void bind_cost(nb::module_& m) {
  nb::class_<ScheduleCost>(
      m, "ScheduleCost",
      "What a schedule costs, as the simulator counts it (Griewank & Walther's counting: y_0 "
      "takes a slot; the forward step each reverse re-runs is not an advance). Stores and "
      "restores count every level; the disk_ and host_ fields one level each.")
      .def_ro("steps", &ScheduleCost::steps, "l")
      .def_ro("slots", &ScheduleCost::slots, "The schedule's budget c.")
      .def_ro("advances", &ScheduleCost::advances,
              "p: steps advanced in all (first sweep and recomputation).")
      .def_ro("first_sweep_advances", &ScheduleCost::first_sweep_advances)
      .def_ro("recomputed_steps", &ScheduleCost::recomputed_steps)
      .def_ro("stores", &ScheduleCost::stores, "Snapshots written.")
      .def_ro("restores", &ScheduleCost::restores, "Snapshots read.")
      .def_ro("reverses", &ScheduleCost::reverses)
      .def_ro("frees", &ScheduleCost::frees)
      .def_ro("peak_slots", &ScheduleCost::peak_slots, "Most snapshots held at once.")
      .def_ro("actions", &ScheduleCost::actions, "Actions issued, done included.")
      .def_ro("disk_slots", &ScheduleCost::disk_slots)
      .def_ro("disk_stores", &ScheduleCost::disk_stores)
      .def_ro("disk_restores", &ScheduleCost::disk_restores)
      .def_ro("peak_disk_slots", &ScheduleCost::peak_disk_slots)
      .def_ro("memory_slots_used", &ScheduleCost::memory_slots_used)
      .def_ro("disk_slots_used", &ScheduleCost::disk_slots_used)
      .def_ro("host_slots", &ScheduleCost::host_slots)
      .def_ro("host_stores", &ScheduleCost::host_stores)
      .def_ro("host_restores", &ScheduleCost::host_restores)
      .def_ro("peak_host_slots", &ScheduleCost::peak_host_slots)
      .def_ro("host_slots_used", &ScheduleCost::host_slots_used)
      .def_ro("stage_units", &ScheduleCost::stage_units)
      .def_ro("stage_stores", &ScheduleCost::stage_stores)
      .def_ro("stage_reverses", &ScheduleCost::stage_reverses)
      .def_prop_ro("forward_evaluations", &ScheduleCost::forward_evaluations,
                   "Forward steps evaluated in all: advances plus the step each reverse from the "
                   "current state re-runs (l + p for revolve).")
      .def("as_dict", &cost_dict, nb::sig("def as_dict(self) -> dict[str, int]"),
           "Every count by name.")
      .def("__str__", &ScheduleCost::to_string)
      .def("__repr__",
           [](const ScheduleCost& c) { return "<ScheduleCost " + c.to_string() + ">"; });
}

void bind_cost_model(nb::module_& m) {
  nb::class_<CostModel>(m, "CostModel",
                        "Time per operation (any unit; ratios matter), for the predicted time "
                        "and the multi-level planners. Fields as in schedule_simulator.hpp.")
      .def(
          "__init__",
          [](CostModel* self, double step_time, double adjoint_cost_factor, double write_time,
             double read_time, double disk_write_time, double disk_read_time,
             double host_write_time, double host_read_time, bool stage_values_copied) {
            new (self) CostModel{step_time,       adjoint_cost_factor, write_time,
                                 read_time,       disk_write_time,     disk_read_time,
                                 host_write_time, host_read_time,      stage_values_copied};
          },
          nb::kw_only(), "step_time"_a = 1.0, "adjoint_cost_factor"_a = 1.0, "write_time"_a = 0.0,
          "read_time"_a = 0.0, "disk_write_time"_a = 0.0, "disk_read_time"_a = 0.0,
          "host_write_time"_a = 0.0, "host_read_time"_a = 0.0, "stage_values_copied"_a = false)
      .def_rw("step_time", &CostModel::step_time, "One forward step.")
      .def_rw("adjoint_cost_factor", &CostModel::adjoint_cost_factor,
              "Adjoint of a step in forward steps, on top of the step it re-runs.")
      .def_rw("write_time", &CostModel::write_time, "One store into a memory (device) slot.")
      .def_rw("read_time", &CostModel::read_time, "One restore from a memory (device) slot.")
      .def_rw("disk_write_time", &CostModel::disk_write_time)
      .def_rw("disk_read_time", &CostModel::disk_read_time)
      .def_rw("host_write_time", &CostModel::host_write_time)
      .def_rw("host_read_time", &CostModel::host_read_time)
      .def_rw("stage_values_copied", &CostModel::stage_values_copied,
              "Whether a stage snapshot costs stage_units copies each way (else one write).")
      .def("validate", &CostModel::validate,
           "Raises InvalidArgument naming the field: all finite and >= 0, step_time > 0.");
}

void bind_validator(nb::module_& m) {
  nb::class_<ScheduleValidator>(
      m, "ScheduleValidator",
      "Checks a stream of actions one at a time against l steps and c slots (a time loop's own "
      "stream, or a schedule's); raises ScheduleViolation at the first broken rule.")
      .def(
          "__init__",
          [](ScheduleValidator* self, Index steps, Index slots, std::string name,
             Index memory_slots, Index host_slots) {
            new (self) ScheduleValidator(steps, to_int(slots, "slots"), std::move(name),
                                         to_int(memory_slots, "memory_slots"),
                                         to_int(host_slots, "host_slots"));
          },
          "steps"_a, "slots"_a, "name"_a = "schedule", "memory_slots"_a = -1, "host_slots"_a = 0)
      .def("apply", &ScheduleValidator::apply, "action"_a)
      .def("set_stage_units", &ScheduleValidator::set_stage_units, "units"_a)
      .def_prop_ro("finished", &ScheduleValidator::finished)
      .def_prop_ro("current_step", &ScheduleValidator::current_step)
      .def_prop_ro("adjoint_step", &ScheduleValidator::adjoint_step)
      .def_prop_ro("slots_in_use", &ScheduleValidator::slots_in_use)
      .def_prop_ro("cost", &ScheduleValidator::cost, "The counts so far.");
}

}  // namespace

void bind_simulator(nb::module_& m) {
  bind_cost(m);
  bind_cost_model(m);
  bind_validator(m);
  m.def("simulate", &simulate_copy, "schedule"_a, "max_actions"_a = 0,
        "Runs a copy of the schedule (this one is not moved) through a ScheduleValidator and "
        "returns its ScheduleCost; raises ScheduleViolation if a rule breaks. max_actions = 0: "
        "16 l + 4 c + 64.");
  m.def(
      "simulate_online",
      [](Index snapshots, Index steps, Index max_actions, OnlineRule rule) {
        return simulate_online(to_int(snapshots, "simulate_online: snapshots c"), steps,
                               SimulatorOptions{.max_actions = max_actions}, rule);
      },
      "snapshots"_a, "steps"_a, "max_actions"_a = 0, "rule"_a = OnlineRule::least_worst_case,
      "The online schedule's cost for a run that ends at l steps, counted as simulate counts.");
  m.def(
      "predicted_time",
      [](const ScheduleCost& cost, const CostModel& model) { return predicted_time(cost, model); },
      "cost"_a, "model"_a = CostModel{},
      "step_time (advances + reverses (1 + adjoint_cost_factor) - stage_reverses) plus each "
      "level's writes and reads at its costs.");
  m.def(
      "predicted_time_ratio",
      [](const ScheduleCost& cost, const CostModel& model) {
        return predicted_time_ratio(cost, model);
      },
      "cost"_a, "model"_a = CostModel{},
      "predicted_time / (l step_time): the gradient's cost in forward runs.");
}

}  // namespace rwd::python
