#include "rewind/adjoint/gradient_health.hpp"

#include <cstdio>
#include <string>

namespace rwd {

std::string GradientHealth::describe() const {
  if (!degenerate()) return {};
  char buffer[256];
  std::string out = "degenerate: ";
  if (gradient_zero) {
    out += "the gradient is zero (dJ/dy0 = 0 and dJ/dtheta = 0, or underflowed to it)";
  } else if (gradient_negligible) {
    std::snprintf(buffer, sizeof buffer,
                  "the gradient is negligible, (|y0| |dJ/dy0| + |theta| |dJ/dtheta|) / |J| = %.3g "
                  "<= %.0e",
                  sensitivity, kNegligibleSensitivity);
    out += buffer;
  }
  if (state_stationary) {
    if (gradient_negligible) out += "; ";
    std::snprintf(buffer, sizeof buffer,
                  "the state is stationary, |y_N - y_N-1| / |y_N| = %.3g <= %.0e at step N = %lld "
                  "(it stopped changing before the end of the run)",
                  final_step_change, kStationaryChange, static_cast<long long>(final_step));
    out += buffer;
  }
  return out;
}

}  // namespace rwd
