// rewind/adjoint/detail/stage_snapshots.hpp — the stage snapshots of a stage-aware plan: a stage
// snapshot of step n is stage_units() consecutive store slots, slot + i holding the stepper's
// stage vector i with the carry of step n. Internal to rwd::CheckpointedAdjoint.
#pragma once

#include <algorithm>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// Which slots begin a stage snapshot, and the stepper's stage vectors to fill and read
// (allocated before the sweep).
template <class Vector>
struct StageSnapshots {
  int units = 0;
  std::vector<Vector> vectors;
  std::vector<char> heads;
  char& head(int slot) { return heads[static_cast<std::size_t>(slot)]; }
  bool head(int slot) const { return heads[static_cast<std::size_t>(slot)] != 0; }
};

// The stage snapshots `schedule` keeps, refused unless the stepper keeps stages
// (rwd::StageKeepingStepper) with as many as the plan and the run has a known length.
template <class Stepper>
auto prepare_stages(const Schedule& schedule, Index state_size, const Stepper& stepper,
                    bool length_known) {
  using B = typename Stepper::Backend;
  StageSnapshots<typename B::Vector> stages;
  stages.heads.assign(static_cast<std::size_t>(std::max(schedule.slots(), 0)), 0);
  stages.units = schedule.stage_units();
  if (stages.units == 0) return stages;
  if constexpr (StageKeepingStepper<Stepper>) {
    if (stages.units != stepper.stage_count())
      fail<InvalidArgument>("schedule '", schedule.name(), "' keeps ", stages.units,
                            " vectors per stage snapshot but the method keeps ",
                            stepper.stage_count(),
                            " per step (its stage values; with adaptive steps, the step size "
                            "too)");
    if (!length_known)
      fail<InvalidArgument>("schedule '", schedule.name(),
                            "' keeps stage values, which needs a run of fixed steps without a "
                            "stop condition");
    for (int i = 0; i < stages.units; ++i) stages.vectors.push_back(B::zeros(state_size));
  } else {
    fail<InvalidArgument>("schedule '", schedule.name(),
                          "' keeps stage values, but this stepper cannot hand them out (it is no "
                          "rwd::StageKeepingStepper: stage_count, step_keeping_stages, "
                          "adjoint_step_from_stages)");
  }
  return stages;
}

}  // namespace rwd::detail
