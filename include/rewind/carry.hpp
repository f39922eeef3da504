// rewind/carry.hpp — the small integrator state saved next to every stored vector.
//
// Restarting a stepper from (y_n, carry_n) must reproduce the original steps bit for bit, also
// with adaptive step sizes; so everything the step-size controller remembers lives here rather
// than inside the stepper. It is trivially copyable: snapshot stores save it as raw bytes.
#pragma once

#include <type_traits>

#include "rewind/types.hpp"

namespace rwd {

struct Carry {
  double t = 0.0;           // time of the state this carry belongs to
  double h = 0.0;           // the step size the next step tries first
  double error_prev = 1.0;  // last accepted error norm (PI controller memory)
  Index step = 0;           // index n of the state: y_n
  Index rejected = 0;       // rejected attempts so far in the run (statistics only)
};

static_assert(std::is_trivially_copyable_v<Carry>);

inline bool bitwise_equal(const Carry& a, const Carry& b) {
  return a.t == b.t && a.h == b.h && a.error_prev == b.error_prev && a.step == b.step &&
         a.rejected == b.rejected;
}

}  // namespace rwd
