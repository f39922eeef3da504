// rewind/adjoint/detail/sweep_clock.hpp — the split of a checkpointed sweep's wall time into
// forward, recompute and reverse work (Summary::forward_seconds, recompute_seconds,
// reverse_seconds). Internal to rwd::CheckpointedAdjoint.
#pragma once

#include <chrono>

namespace rwd::detail {

// The clock is read only where the kind of work changes, not around every action: two clock
// reads per action were 13 % of a store-all-stages Lorenz-96 (N = 40) gradient, whose steps take
// a fraction of a microsecond. Whatever runs between two changes (stores, restores, frees) counts
// toward the work in progress, so the three add up to the sweep's wall time.
class SweepClock {
 public:
  enum Work { forward = 0, recompute = 1, reverse = 2 };
  void enter(Work w) {
    if (w == current_) return;
    const auto now = std::chrono::steady_clock::now();
    if (current_ >= 0) seconds_[current_] += std::chrono::duration<double>(now - since_).count();
    since_ = now;
    current_ = w;
  }
  void stop() {
    if (current_ < 0) return;
    seconds_[current_] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
    current_ = -1;
  }
  double seconds(Work w) const { return seconds_[w]; }

 private:
  int current_ = -1;
  std::chrono::steady_clock::time_point since_{};
  double seconds_[3] = {0.0, 0.0, 0.0};
};

}  // namespace rwd::detail
