// python/src/bindings.hpp — the parts of the extension module rewind._rewind, each bound by one
// function in its own file, and the argument checks they share.
//
//   NB_MODULE(_rewind, m) { rwd::python::bind_errors(m); rwd::python::bind_actions(m); … }
//
// Every C++ exception of rewind reaches Python as the matching exception type of errors.cpp
// (rewind.InvalidArgument for bad input, with rewind's own message), so the bindings check
// nothing the library already checks; they add only what converting a Python int needs.
#pragma once

#include <nanobind/nanobind.h>

#include <climits>

#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::python {

void bind_errors(nanobind::module_& m);     // errors.cpp
void bind_actions(nanobind::module_& m);    // actions.cpp
void bind_schedules(nanobind::module_& m);  // schedules.cpp
void bind_simulator(nanobind::module_& m);  // simulator.cpp
void bind_planning(nanobind::module_& m);   // planning.cpp
void bind_tableaux(nanobind::module_& m);   // tableaux.cpp

// A Python int for a C++ int parameter: the library refuses bad values with its own messages, so
// this refuses only what would not survive the conversion, naming the value and the rule.
inline int to_int(Index value, const char* what) {
  if (value < INT_MIN || value > INT_MAX)
    detail::fail<InvalidArgument>(what, " = ", value, " does not fit in an int (at most ", INT_MAX,
                                  ")");
  return static_cast<int>(value);
}

}  // namespace rwd::python
