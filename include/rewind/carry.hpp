// rewind/carry.hpp — the small integrator state saved next to every stored vector.
//
// Restarting a stepper from (y_n, carry_n) must reproduce the original steps bit for bit, also
// with adaptive step sizes; so everything the step-size controller remembers lives here rather
// than inside the stepper. It is trivially copyable: snapshot stores save it as raw bytes.
//
// noise_seed is the key of a stochastic stepper's draws (rewind/integrators/keyed_noise.hpp):
// every draw of the step from (y_n, carry_n) is regenerated from (noise_seed, n, stage,
// component), so keeping the seed here puts it in every snapshot, in memory or on disk, and a
// replay from any snapshot draws exactly what the first sweep drew. Deterministic steppers leave
// it 0.
#pragma once

#include <cstdint>
#include <type_traits>

#include "rewind/types.hpp"

namespace rwd {

struct Carry {
  double t = 0.0;                // time of the state this carry belongs to
  double h = 0.0;                // the step size the next step tries first
  double error_prev = 1.0;       // last accepted error norm (PI controller memory)
  Index step = 0;                // index n of the state: y_n
  Index rejected = 0;            // rejected attempts so far in the run (statistics only)
  std::uint64_t noise_seed = 0;  // key of the stochastic stepper's draws (0 for ODE steppers)
};

static_assert(std::is_trivially_copyable_v<Carry>);

inline bool bitwise_equal(const Carry& a, const Carry& b) {
  return a.t == b.t && a.h == b.h && a.error_prev == b.error_prev && a.step == b.step &&
         a.rejected == b.rejected && a.noise_seed == b.noise_seed;
}

}  // namespace rwd
