// rewind/adjoint/checkpoint_options.hpp — what rwd::CheckpointedAdjoint is told and what it
// returns beyond every driver's GradientResult: drift policy and fingerprints, finite checks,
// health, progress records of resumable runs, the disk and level stores, the step observer;
// the drift report, counting sweep and resume figures.
#pragma once

#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/error.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/store_for_plan.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct CheckpointOptions {
  DriftPolicy drift_policy = DriftPolicy::warn;  // what a replay that differs does
  // Drift monitor: at most this many fingerprints (one every ⌈l / max⌉ steps), first sweep and
  // replays alike. A fingerprint is one reduction pass over the state on the backend's own
  // device (a hash and four projections), so this bounds the monitor's share of the run; see
  // docs/checkpointing.md (Drift).
  Index max_fingerprints = 4096;
  bool check_finite = true;  // NaN/Inf checks of states and adjoints
  // Summary::health (gradient_health.hpp): four norms over y_0, θ and the gradient after the
  // sweep. A caller that reads no health — a trainer differentiating a minibatch's windows over
  // per-window copies of θ, where those norms were 8 % of an iteration — may turn it off; the
  // summary then says health.assessed = false.
  bool assess_health = true;
  // Resumable runs (disk.resume): a progress record is written after a store into or a restore
  // from a disk slot when at least this long has passed since the last one (0: after every one).
  // A killed run loses at most about this much work, plus the recomputation of what it held in
  // memory; a record costs a copy of λ, μ and y_l once the reverse sweep has begun.
  double progress_interval_seconds = 1.0;
  // Where and how slots at or above the schedule's memory_slots() are kept: the directory (or
  // file), background I/O, compression, whether to keep the file. Unused by memory-only schedules.
  DiskStoreOptions disk;
  // Three-level schedules (rwd::three_level_schedule): what the device and host levels may hold,
  // checked before anything is allocated or written (0: the memory free at the start).
  SnapshotLevelLimits levels;
  // Called at every forward, recomputed and reverse step (rewind/adjoint/step_observer.hpp);
  // none by default.
  StepObserver observer;

  void validate() const {
    if (max_fingerprints < 1)
      detail::fail<InvalidArgument>("max_fingerprints = ", max_fingerprints, " must be >= 1");
    if (!(progress_interval_seconds >= 0.0))
      detail::fail<InvalidArgument>("progress_interval_seconds = ", progress_interval_seconds,
                                    " must be >= 0");
  }
};

template <class Vector>
struct CheckpointedResult : GradientResult<Vector> {
  DriftReport drift;
  Index counting_steps = 0;  // steps of a counting sweep (0 for fixed steps and online runs)
  // A resumed run (CheckpointOptions::disk.resume, continuing a killed one): the action it went
  // on from (−1: started afresh), the disk snapshots found intact, and the steps recomputed to
  // rebuild the others and the current state (not counted in summary.forward_steps).
  Index resumed_at_action = -1;
  Index adopted_snapshots = 0;
  Index resume_replayed_steps = 0;
};

}  // namespace rwd
