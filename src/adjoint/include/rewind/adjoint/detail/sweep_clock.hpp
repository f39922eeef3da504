// rewind/adjoint/detail/sweep_clock.hpp — the split of a checkpointed sweep's wall time and
// right-hand-side evaluations into forward, recompute and reverse work
// (Summary::forward_seconds, recompute_seconds, reverse_seconds; rhs_evaluations_forward counts
// forward and recompute, rhs_evaluations_reverse the evaluations inside adjoint steps, as the
// store-all driver counts them). Internal to rwd::CheckpointedAdjoint.
#pragma once

#include <chrono>

#include "rewind/types.hpp"

namespace rwd::detail {

// The clock is read only where the kind of work changes, not around every action: two clock
// reads per action were 13 % of a store-all-stages Lorenz-96 (N = 40) gradient, whose steps take
// a fraction of a microsecond. Whatever runs between two changes (stores, restores, frees) counts
// toward the work in progress, so the three add up to the sweep's wall time. The stepper's
// running count of rhs evaluations is read at the same changes, so every evaluation is
// attributed to the work that made it.
class SweepClock {
 public:
  enum Work { forward = 0, recompute = 1, reverse = 2 };
  // `rhs_now`: a callable returning the stepper's running rhs evaluation count; called only
  // when the work changes.
  template <class RhsCount>
  void enter(Work w, const RhsCount& rhs_now) {
    if (w == current_) return;
    close(rhs_now());
    current_ = w;
  }
  void stop(Index rhs_now) {
    close(rhs_now);
    current_ = -1;
  }
  double seconds(Work w) const { return seconds_[w]; }
  // Rhs evaluations made while `w` was the work in progress.
  Index rhs_evaluations(Work w) const { return rhs_[w]; }

 private:
  void close(Index rhs_now) {
    const auto now = std::chrono::steady_clock::now();
    if (current_ >= 0) {
      seconds_[current_] += std::chrono::duration<double>(now - since_).count();
      rhs_[current_] += rhs_now - rhs_since_;
    }
    since_ = now;
    rhs_since_ = rhs_now;
  }

  int current_ = -1;
  std::chrono::steady_clock::time_point since_{};
  Index rhs_since_ = 0;
  double seconds_[3] = {0.0, 0.0, 0.0};
  Index rhs_[3] = {0, 0, 0};
};

}  // namespace rwd::detail
