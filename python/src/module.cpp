// python/src/module.cpp — the extension module rewind._rewind: rewind's checkpointing schedules
// for a time loop written in Python (pure integers; no state ever crosses into C++). The package
// rewind (python/rewind/__init__.py) re-exports everything defined here.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_rewind, m) {
  m.doc() =
      "rewind's checkpointing schedules, simulator and planning (the C++ library "
      "checkpoint/schedule), for time loops written in Python, and its explicit Runge-Kutta "
      "tableaux.";
  rwd::python::bind_errors(m);
  rwd::python::bind_actions(m);
  rwd::python::bind_schedules(m);
  rwd::python::bind_simulator(m);
  rwd::python::bind_planning(m);
  rwd::python::bind_tableaux(m);
}
