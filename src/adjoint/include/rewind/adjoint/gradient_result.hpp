// rewind/adjoint/gradient_result.hpp — what every adjoint driver returns.
#pragma once

#include "rewind/adjoint/summary.hpp"

namespace rwd {

template <class Vector>
struct GradientResult {
  double loss = 0.0;  // J
  Vector grad_y0;     // dJ/dy0
  Vector grad_theta;  // dJ/dθ
  Vector y_final;     // y_N
  Summary summary;    // counts, bytes and times
};

}  // namespace rwd
