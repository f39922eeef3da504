// rewind/adjoint/detail/resume_rebuild.hpp — what a resumed checkpointed sweep puts back before it
// goes on: every snapshot the killed process held when it saved its progress record — adopted
// from the file where intact, otherwise recomputed from the nearest earlier snapshot (or y_0) —
// and the current state. Each recomputed step is checked by the drift monitor against the killed
// process's first sweep. Internal to rwd::CheckpointedAdjoint.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "rewind/adjoint/detail/resume_journal.hpp"
#include "rewind/adjoint/detail/stage_snapshots.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd::detail {

// What rebuilding took: snapshots adopted from the file, steps recomputed.
struct Rebuilt {
  Index adopted = 0;
  Index replayed = 0;
};

// The parts of a sweep a rebuild works on.
template <class Stepper>
struct RebuildTarget {
  using B = typename Stepper::Backend;
  Stepper& stepper;
  SnapshotStore<B, Carry>& store;
  StageSnapshots<typename B::Vector>& stages;
  DriftMonitor<B>& drift;
  ResumeJournal<B>& journal;
  bool check_finite;
  const StepObserver& observer;
};

// Refuses a record that names slots or steps this run's schedule cannot have.
template <class B>
void require_consistent(const ResumePoint& point, const ResumeJournal<B>& journal,
                        int stage_units) {
  for (const ResumePoint::Held& h : point.held)
    if (h.slot < 0 || h.slot >= journal.slots() || h.step < 0 || h.step > point.sweep.reached ||
        (h.stage_head && stage_units == 0))
      fail<StorageError>("the progress record names slot ", h.slot, " holding y_", h.step,
                         ", which this run's schedule cannot have");
  if (point.position < 0 || point.position > point.sweep.reached)
    fail<StorageError>("the progress record puts the run at step ", point.position, " beyond the ",
                       point.sweep.reached, " steps it took");
}

// Puts back the snapshots `point` names and the state at point.position into (y, carry).
template <class Stepper>
Rebuilt rebuild(const RebuildTarget<Stepper>& at_hand, const ResumePoint& point,
                const typename Stepper::Backend::Vector& y0,
                const typename Stepper::Backend::Vector& theta,
                typename Stepper::Backend::Vector& y, Carry& carry) {
  using B = typename Stepper::Backend;
  using Vector = typename B::Vector;
  auto& [stepper, store, stages, drift, journal, check_finite, observer] = at_hand;
  require_consistent(point, journal, stages.units);
  Rebuilt rebuilt;
  std::vector<ResumePoint::Held> held = point.held;
  std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  std::vector<std::pair<Index, int>> intact;  // (step, slot), ascending
  for (const ResumePoint::Held& h : held)
    if (!h.stage_head && store.adopt(h.slot, h.step)) {
      intact.emplace_back(h.step, h.slot);
      journal.hold(h.slot, h.step);
      ++rebuilt.adopted;
    }
  Vector walk = B::zeros(stepper.state_size());
  Carry at{};
  bool started = false;
  // Moves the walker to y_target from the walker itself, the latest intact snapshot before
  // the target, or y_0 — whichever is nearest.
  const auto bring_to = [&](Index target) {
    const Index from = started && at.step <= target ? at.step : -1;
    const std::pair<Index, int>* best = nullptr;
    for (const auto& snapshot : intact)
      if (snapshot.first <= target) best = &snapshot;
    if (best && best->first > from) {
      store.restore(best->second, best->first, walk, at);
    } else if (from < 0) {
      B::copy(y0, walk);
      at = stepper.initial_carry(walk, theta);
    }
    started = true;
    while (at.step < target) {
      stepper.step(walk, at, theta);
      ++rebuilt.replayed;
      if (check_finite) require_finite_state<B>(walk, at);
      notify(observer, StepKind::recompute, at.step, at.t);
      drift.check(at.step, at.t, walk);
    }
  };
  for (const ResumePoint::Held& h : held) {
    if (journal.held(h.slot) == h.step) continue;  // adopted
    bring_to(h.step);
    if (!h.stage_head) {
      store.store(h.slot, h.step, walk, at);
      journal.hold(h.slot, h.step);
      continue;
    }
    if constexpr (StageKeepingStepper<Stepper>) {
      const Carry of_step = at;
      stepper.step_keeping_stages(walk, at, theta, stages.vectors);
      ++rebuilt.replayed;
      notify(observer, StepKind::recompute, at.step, at.t);
      for (int i = 0; i < stages.units; ++i) {
        store.store(h.slot + i, of_step.step, stages.vectors[static_cast<std::size_t>(i)], of_step);
        journal.hold(h.slot + i, of_step.step);
      }
      stages.head(h.slot) = true;  // (y_{step+1} past y_{l−1} was never fingerprinted)
    }
  }
  bring_to(point.position);
  B::copy(walk, y);
  carry = at;
  return rebuilt;
}

}  // namespace rwd::detail
