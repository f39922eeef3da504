// rewind/adjoint/checkpointed_adjoint.hpp — the adjoint driver that runs any checkpointing
// schedule with any stepper, in a fixed snapshot budget.
//
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 100000));
//   rwd::CheckpointedAdjoint driver(stepper, objective);
//   auto result = driver.run(y0, theta, rwd::revolve_schedule(/*snapshots=*/20));
//   result.summary  // forward / recomputed / reversed steps, stores, restores, peak bytes
//   result.drift    // proof that every replay reproduced the first sweep
//
// The run is planned once (rwd::CheckpointPlan, rewind/schedule/checkpoint_plan.hpp): the driver
// executes the plan's action stream (rewind/schedule/action.hpp: advance, store, restore,
// reverse, free) on the store the plan asks for (rwd::make_snapshot_store): memory slots in a
// MemorySnapshotStore allocated up front (and kept by the driver for its next run while the slot
// count and state size stay the same), disk slots (two-level schedules, or any schedule
// wrapped by on_disk()) in an HDF5 file in options.disk.directory, written behind and read ahead
// by a background thread. A copy of the plan's schedule runs ahead (RestoreLookahead) so each
// disk snapshot is being read while the computation before its restore still runs. Contract: on a
// deterministic backend the gradient is bit-for-bit that of StoreAllAdjoint, whatever the schedule,
// budget and store — the same adjoint steps run on the same bits in the same order, and the loss is
// summed in the same order.
//
// The terminal cost needs y_l, which a revolve schedule never advances to (its first reverse
// re-runs the last step): the driver computes y_l from y_{l−1} once, at the first reverse.
//
// Runs of unknown length — adaptive steps, or a stop condition (rewind/stop_condition.hpp) —
// run the online schedule rwd::OnlineSchedule when the planner names an online budget
// (revolve_schedule(c) does): no counting sweep, and the gradient is bitwise that of
// StoreAllAdjoint over the same accepted steps. In its forward phase every step is taken into the
// y_l buffer first; if the run ends there that buffer is the final state and the current state
// stays y_{l−1}, exactly where revolve's first reverse begins, so the last step is never taken
// twice (one state copy per forward step is the price). on_disk() of such a planner runs the
// same online schedule with every snapshot in the disk level, read ahead once the end is known
// (from there the schedule's actions are fixed, and a copy of it runs ahead). Other planners
// (two-level, uniform, store-all, custom) need l to plan: a counting sweep (one extra forward run
// without storage) comes first, reported in the summary.
//
// Resumable runs (options.disk.resume, a plan with a disk level, or the online schedule on
// disk, whose record also holds the run's length once found): the snapshot file
// carries the run's identity (the caller's text in options.disk.identity, plus the sizes, the
// hashes of y_0 and θ, the schedule and the steps) and, after every store into and restore from a
// disk slot, a progress record (rewind/adjoint/resume_point.hpp) written behind the snapshots it
// relies on (at most one a second: CheckpointOptions::progress_interval_seconds). A process killed
// at any instant — SIGKILL included — leaves a file from which the same call continues: the
// schedule is replayed to the recorded action without executing it, the disk snapshots still intact
// are adopted, the others and the current state are recomputed from the nearest snapshot before
// them (the drift monitor, restored too, checks every recomputed step against the killed process's
// first sweep), and the run goes on. The gradient is bit for bit that of an uninterrupted run. A
// stop requested by a signal (rewind/interrupt.hpp) is honoured at the next action boundary:
// progress is saved, background writes are finished, and rwd::Interrupted is thrown. The file stays
// until the run completes. A state split across ranks (one file per rank) resumes the same way: the
// ranks agree on a stop request before they honour it and on when to write a record, continue from
// the newest record they all hold, and adopt a snapshot only where every rank's slice of it is
// intact (DiskSnapshotStore).
//
// Stage-aware plans (rwd::stage_aware_schedule, rwd::store_all_stages_schedule) also keep the
// stage values of some steps: a stage snapshot of step n is stage_units() consecutive store slots,
// slot + i holding the stepper's stage vector i with the carry of step n, written by the
// stepper's step_keeping_stages() and read back for adjoint_step_from_stages(), which re-runs
// nothing. They need a stepper that offers both, the same number of stages as the plan, and a run
// of fixed length; the gradient is bit for bit the same as with any other schedule.
//
// Structure. This header is the driver's face: CheckpointedAdjoint checks its inputs, finds the
// run's length (or chooses the online schedule), plans once and hands the run to one sweep
// (detail/checkpointed_sweep.hpp), which executes the action stream with one executor per action
// kind over a sweep state (rewind/adjoint/sweep_state.hpp). Around the sweep: the store set up
// from the plan in one place (detail/sweep_store.hpp), stage snapshots
// (detail/stage_snapshots.hpp), the resume journal that saves the sweep state whole and the
// rebuild of a resumed run (detail/resume_journal.hpp, detail/resume_rebuild.hpp), the adjoint
// steps and terminal cost shared with StoreAllAdjoint (detail/adjoint_steps.hpp) and the summary
// every driver fills alike (detail/summary_finisher.hpp). The options and the result are in
// rewind/adjoint/checkpoint_options.hpp; rwd::differentiate (rewind/adjoint/differentiate.hpp)
// takes this driver, StoreAllAdjoint or BacksolveAdjoint as a strategy. Progress is seen through
// CheckpointOptions::observer (rewind/adjoint/step_observer.hpp).
#pragma once

#include <chrono>
#include <optional>
#include <utility>

#include "rewind/adjoint/checkpoint_options.hpp"
#include "rewind/adjoint/detail/checkpointed_sweep.hpp"
#include "rewind/adjoint/detail/sweep_store.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/run_end.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/adjoint/sweep_state.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stop_condition.hpp"

namespace rwd {

template <class Stepper>
class CheckpointedAdjoint {
  static_assert(TimeStepper<Stepper>,
                "CheckpointedAdjoint needs a rwd::TimeStepper (rewind/integrators/"
                "stepper_concepts.hpp): state_size, parameter_size, planned_steps, finished, "
                "initial_carry, step, adjoint_step, counters, reset_counters");

 public:
  using Backend = typename Stepper::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // The stepper must outlive the driver; the objective is copied. With a stop condition the run
  // ends where it first holds (rewind/stop_condition.hpp); the stepper's own end is then a cap.
  CheckpointedAdjoint(Stepper& stepper, Objective<Backend> objective,
                      CheckpointOptions options = {},
                      std::optional<StopCondition<Backend>> stop = std::nullopt)
      : stepper_(stepper),
        objective_(std::move(objective)),
        options_(options),
        run_end_(stepper, std::move(stop)) {
    options_.validate();
  }

  // Runs with a plan for the run's length: made at once for fixed steps, or after a counting
  // sweep; a run of unknown length whose planner names an online budget runs online instead.
  // The planner is called at most once.
  CheckpointedResult<Vector> run(const Vector& y0, const Vector& theta, const Planner& planner) {
    if (!planner) detail::fail<InvalidArgument>("CheckpointedAdjoint::run needs a planner");
    check_inputs(y0, theta);
    stepper_.reset_counters();
    if (!run_end_.length_known() && planner.online_snapshots()) {
      if (options_.disk.resume && !planner.online_on_disk())
        detail::fail<InvalidArgument>(
            "a run of unknown length (adaptive steps or a stop condition) whose online schedule "
            "keeps every snapshot in memory could not be resumed: put them on disk (on_disk)");
      OnlineSchedule schedule(*planner.online_snapshots(), planner.online_rule());
      return execute(y0, theta, schedule, nullptr, -1, planner.online_on_disk());
    }
    const Index steps = steps_of_run(y0, theta);
    const CheckpointPlan plan = planner(steps);
    return execute(y0, theta, *plan.schedule(), &plan, steps);
  }

  // Runs a plan made beforehand (rwd::plan_checkpoints); its steps must be the run's.
  CheckpointedResult<Vector> run(const Vector& y0, const Vector& theta,
                                 const CheckpointPlan& plan) {
    check_inputs(y0, theta);
    stepper_.reset_counters();
    const Index steps = steps_of_run(y0, theta);
    return execute(y0, theta, *plan.schedule(), &plan, steps);
  }

 private:
  void check_inputs(const Vector& y0, const Vector& theta) const {
    detail::require_run_inputs<B>(y0, theta, stepper_.state_size(), stepper_.parameter_size());
    detail::require_observation_times_landed(objective_, stepper_);
  }

  // The fixed number of steps, or for a run of unknown length the steps of a counting sweep.
  Index steps_of_run(const Vector& y0, const Vector& theta) {
    return run_end_.length_known() ? stepper_.planned_steps() : count_steps(y0, theta);
  }

  // Runs `schedule`: a planned one (`plan` given, `steps` = l) or the online schedule (`plan`
  // null, `steps` = −1 until the run ends; its snapshots in memory, or all in the disk level).
  CheckpointedResult<Vector> execute(const Vector& y0, const Vector& theta, Schedule& schedule,
                                     const CheckpointPlan* plan, Index steps,
                                     bool online_on_disk = false) {
    schedule.reset();
    const auto setup_start = std::chrono::steady_clock::now();
    detail::CheckpointedSweep<Stepper> sweep({stepper_, objective_, options_, run_end_, memory_},
                                             {schedule, plan, steps, online_on_disk}, y0, theta);
    const double setup_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
    CheckpointedResult<Vector> result = sweep.run();
    result.summary.setup_seconds = setup_seconds;
    return result;
  }

  // The steps of a counting sweep: one forward run without storage, for planners that need l.
  Index count_steps(const Vector& y0, const Vector& theta) {
    Vector y = B::zeros(B::size(y0));
    B::copy(y0, y);
    Carry carry = stepper_.initial_carry(y, theta);
    detail::notify(options_.observer, StepKind::start, carry.step, carry.t);
    do {
      stepper_.step(y, carry, theta);
      if (options_.check_finite) detail::require_finite_state<B>(y, carry);
      detail::notify(options_.observer, StepKind::forward, carry.step, carry.t);
    } while (!run_end_.ends_at(carry, y));
    detail::require_observed_steps_taken(objective_, carry.step, carry.t);
    return carry.step;
  }

  Stepper& stepper_;
  Objective<Backend> objective_;
  CheckpointOptions options_;
  detail::RunEnd<Stepper> run_end_;
  detail::MemoryStoreCache<B> memory_;  // the memory store, kept from run to run
};

}  // namespace rwd
