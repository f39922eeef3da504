// rewind/adjoint/detail/describe_method.hpp — Summary::method of a stepper: its own description
// (rwd::SelfDescribingStepper), or a Runge–Kutta stepper's tableau and step control.
#pragma once

#include <sstream>
#include <string>

#include "rewind/integrators/stepper_concepts.hpp"

namespace rwd::detail {

template <class Stepper>
std::string describe_method(const Stepper& stepper) {
  if constexpr (SelfDescribingStepper<Stepper>) {
    return stepper.describe();  // steppers that are not Runge–Kutta describe themselves
  } else {
    const auto& c = stepper.control();
    std::ostringstream out;
    out.precision(6);
    out << stepper.tableau().name;
    if (c.is_adaptive())
      out << ", adaptive rtol = " << c.rtol << " atol = " << c.atol;
    else if (c.is_prescribed())
      out << ", " << c.steps << " prescribed steps";
    else
      out << ", fixed dt = " << c.dt;
    return out.str();
  }
}

}  // namespace rwd::detail
