// python/src/actions.cpp — rwd::ActionKind and rwd::Action (rewind/schedule/action.hpp) as the
// Python types ActionKind and Action: what a schedule tells a time loop to do next.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <functional>
#include <string>

#include "bindings.hpp"
#include "rewind/schedule/action.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rwd::python {
namespace {

// "Action.store(slot=2, step=17)": the call that makes the same action.
std::string action_repr(const Action& a) {
  const std::string step = std::to_string(a.step);
  const std::string slot = std::to_string(a.slot);
  switch (a.kind) {
    case ActionKind::advance:
      return "Action.advance(" + step + ")";
    case ActionKind::store:
      return "Action.store(slot=" + slot + ", step=" + step + ")";
    case ActionKind::restore:
      return "Action.restore(slot=" + slot + ", step=" + step + ")";
    case ActionKind::reverse:
      return a.uses_stages() ? "Action.reverse_from_stages(step=" + step + ", slot=" + slot + ")"
                             : "Action.reverse(" + step + ")";
    case ActionKind::free:
      return "Action.free(slot=" + slot + ", step=" + step + ")";
    case ActionKind::done:
      return "Action.done()";
    case ActionKind::store_stages:
      return "Action.store_stages(slot=" + slot + ", step=" + step + ")";
  }
  return "Action(?)";
}

}  // namespace

void bind_actions(nb::module_& m) {
  nb::enum_<ActionKind>(m, "ActionKind",
                        "What an Action asks the time loop to do (rewind/schedule/action.hpp).")
      .value("advance", ActionKind::advance, "Run forward from the current step n to `step`.")
      .value("store", ActionKind::store,
             "Copy the current state (step n = `step`) into slot `slot`, which is free.")
      .value("restore", ActionKind::restore,
             "Make the state held in slot `slot` (of step `step`) current; the slot keeps it.")
      .value("reverse", ActionKind::reverse,
             "Run the adjoint of step `step` (the current step), which needs the adjoint at "
             "step + 1 and re-runs the forward step once internally; with `slot` >= 0, from the "
             "stage values held in that slot instead (nothing re-run).")
      .value("free", ActionKind::free, "Slot `slot` (holding step `step`) becomes empty.")
      .value("done", ActionKind::done, "The stream is over.")
      .value("store_stages", ActionKind::store_stages,
             "Take step `step` from the current state and keep its stage values in slots "
             "slot .. slot + stage_units - 1; the current state is then y_{step+1}.");

  nb::class_<Action>(m, "Action",
                     "One instruction of a checkpointing schedule: its kind, the step it concerns "
                     "and the slot it uses (-1 for advance, reverse from the current state and "
                     "done). Immutable; equal when kind, step and slot are.")
      .def(nb::init<ActionKind, Index, int>(), "kind"_a, "step"_a = -1, "slot"_a = -1)
      .def_ro("kind", &Action::kind, "The ActionKind.")
      .def_ro("step", &Action::step,
              "Target step of an advance; the step reversed; the step of the state stored, "
              "restored or freed.")
      .def_ro("slot", &Action::slot, "Slot of store, restore, free, store_stages; -1 otherwise.")
      .def_prop_ro("uses_stages", &Action::uses_stages,
                   "Whether this is a reverse from a stage snapshot (slot >= 0).")
      .def_static("advance", &Action::advance, "to_step"_a)
      .def_static("store", &Action::store, "slot"_a, "step"_a)
      .def_static("restore", &Action::restore, "slot"_a, "step"_a)
      .def_static("reverse", &Action::reverse, "step"_a)
      .def_static("free", &Action::free, "slot"_a, "step"_a)
      .def_static("done", &Action::done)
      .def_static("store_stages", &Action::store_stages, "slot"_a, "step"_a)
      .def_static("reverse_from_stages", &Action::reverse_from_stages, "step"_a, "slot"_a)
      .def("__str__", &Action::to_string,
           "What the action says, e.g. 'store y_17 in slot 2', 'reverse step 4'.")
      .def("__repr__", &action_repr)
      .def(
          "__eq__",
          [](const Action& a, nb::handle other) -> nb::object {
            if (!nb::isinstance<Action>(other)) return nb::borrow(Py_NotImplemented);
            return nb::bool_(a == nb::cast<const Action&>(other));
          },
          nb::sig("def __eq__(self, other: object, /) -> bool"), nb::arg("other").none())
      .def("__hash__",
           [](const Action& a) {
             return std::hash<Index>{}(a.step * 64 + static_cast<Index>(a.kind)) ^
                    std::hash<int>{}(a.slot);
           })
      .def(
          "__iter__",
          [](const Action& a) { return nb::iter(nb::make_tuple(a.kind, a.step, a.slot)); },
          nb::sig("def __iter__(self) -> typing.Iterator[ActionKind | int]"),
          "kind, step, slot = action: unpacks like a named tuple.");
}

}  // namespace rwd::python
