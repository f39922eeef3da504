// rewind/adjoint/sweep_state.hpp — where a checkpointed sweep stands, as one value: how far the
// first sweep got, where the adjoint is, the run's length once known, what the schedule's actions
// have done so far, and the loss summed so far.
//
// rwd::CheckpointedAdjoint keeps one SweepState per run; its action executors update it, the
// summary is filled from it, and a resumable run's progress record (rwd::ResumePoint) saves and
// restores it whole, so a continued run goes on from exactly the counts and sums it stopped at.
#pragma once

#include <limits>

#include "rewind/types.hpp"

namespace rwd {

struct SweepState {
  Index reached = 0;     // furthest step of the first sweep
  Index adjoint_at = 0;  // λ holds ∂J/∂y_{adjoint_at} (the run's l until the first reverse)
  // The run's steps l; for a run of unknown length (the online schedule) −1 until its end is
  // found.
  Index steps = -1;
  bool terminal_done = false;  // y_l formed, the terminal cost taken, λ = ∂J/∂y_l
  // The schedule's actions so far: steps advanced (forward or recomputed, stage-keeping ones
  // included), states stored and restored, steps reversed (of which from kept stages).
  Index advances = 0, stores = 0, restores = 0, reverses = 0, stage_reverses = 0;
  double loss = 0.0;     // J so far, summed in StoreAllAdjoint's order
  double final_t = 0.0;  // t_l, once the terminal cost is taken
  // ‖y_l − y_{l−1}‖ / ‖y_l‖ (Summary::health), once the terminal cost is taken.
  double final_change = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace rwd
