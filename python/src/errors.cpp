// python/src/errors.cpp — rewind's exceptions as Python exceptions, with the library's messages.
//
//   rewind.Error               (Exception)          any rwd::Error
//   rewind.InvalidArgument     (Error, ValueError)  rwd::InvalidArgument: bad input, refused
//   rewind.InvalidPlanRequest  (InvalidArgument)    rwd::InvalidPlanRequest; .field, .rule
//   rewind.ScheduleViolation   (InvalidArgument)    rwd::ScheduleViolation; .action_index, .action
//
// InvalidArgument is also a ValueError, so code that catches Python's usual type for bad values
// catches rewind's too.
#include <nanobind/nanobind.h>

#include <exception>

#include "bindings.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace nb = nanobind;

namespace rwd::python {
namespace {

// The exception types, created once at import; the module keeps them alive.
PyObject* error_type = nullptr;
PyObject* invalid_argument_type = nullptr;
PyObject* invalid_plan_request_type = nullptr;
PyObject* schedule_violation_type = nullptr;

PyObject* new_exception_type(nb::module_& m, const char* name, const char* doc, nb::tuple bases) {
  const std::string qualified = std::string("rewind.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

// Raises `type` with the message and the given attributes set on the exception object.
template <class... Attributes>
void raise_with(PyObject* type, const char* message, Attributes&&... attributes) {
  nb::object exception = nb::borrow(type)(nb::str(message));
  ((exception.attr(attributes.first) = attributes.second), ...);
  PyErr_SetObject(type, exception.ptr());
}

}  // namespace

void bind_errors(nb::module_& m) {
  error_type = new_exception_type(m, "Error", "Any error rewind reports.",
                                  nb::make_tuple(nb::handle(PyExc_Exception)));
  invalid_argument_type = new_exception_type(
      m, "InvalidArgument",
      "Bad input, refused before any work; the message names the value and the rule.",
      nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_ValueError)));
  invalid_plan_request_type = new_exception_type(
      m, "InvalidPlanRequest",
      "A PlanRequest that breaks a rule: .field names the request's field (as PlanRequest spells "
      "it), .rule is the message after the field's name.",
      nb::make_tuple(nb::handle(invalid_argument_type)));
  schedule_violation_type = new_exception_type(
      m, "ScheduleViolation",
      "The first broken rule of an action stream: .action_index is its 0-based position, "
      ".action the action.",
      nb::make_tuple(nb::handle(invalid_argument_type)));

  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const InvalidPlanRequest& e) {
      raise_with(invalid_plan_request_type, e.what(),
                 std::pair{"field", nb::str(plan_field_name(e.field()))},
                 std::pair{"rule", nb::str(e.rule().c_str())});
    } catch (const ScheduleViolation& e) {
      raise_with(schedule_violation_type, e.what(),
                 std::pair{"action_index", nb::cast(e.action_index())},
                 std::pair{"action", nb::cast(e.action())});
    } catch (const InvalidArgument& e) {
      PyErr_SetString(invalid_argument_type, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error_type, e.what());
    }
  });
}

}  // namespace rwd::python
