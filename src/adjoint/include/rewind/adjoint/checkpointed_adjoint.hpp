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
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/parameter_gradient_watch.hpp"
#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/run_end.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/objective.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stop_condition.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/restore_lookahead.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/store/store_for_plan.hpp"
#include "rewind/store/tiered_snapshot_store.hpp"

namespace rwd {

namespace detail {
// The sweep's split of time into forward, recompute and reverse work, with the clock read only
// where the kind of work changes, not around every action: two clock reads per action were 13 %
// of a store-all-stages Lorenz-96 (N = 40) gradient, whose steps take a fraction of a
// microsecond. Whatever runs between two changes (stores, restores, frees) counts toward the
// work in progress, so the three add up to the sweep's wall time.
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
}  // namespace detail

struct CheckpointOptions {
  DriftPolicy drift_policy = DriftPolicy::warn;  // what a replay that differs does
  // Drift monitor: at most this many fingerprints (one every ⌈l / max⌉ steps), first sweep and
  // replays alike. A fingerprint is one reduction pass over the state on the backend's own
  // device (a hash and four projections), so this bounds the monitor's share of the run; see
  // README.
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
  CheckpointedResult<Vector> execute(const Vector& y0, const Vector& theta, Schedule& schedule_ref,
                                     const CheckpointPlan* plan, Index steps,
                                     bool online_on_disk = false) {
    const Index n = stepper_.state_size();
    const Index p = stepper_.parameter_size();
    CheckpointedResult<Vector> result;
    auto* online = dynamic_cast<OnlineSchedule*>(&schedule_ref);
    result.counting_steps = plan && !run_end_.length_known() ? steps : 0;
    Summary& summary = result.summary;
    std::unique_ptr<SnapshotStore<B, Carry>> own_store;  // a store with a disk or host level
    SnapshotStore<B, Carry>* store = nullptr;            // own_store, or the reused memory store
    std::optional<RestoreLookahead> lookahead, host_lookahead;  // disk; host (three levels)
    // Unknown length: the monitor thins its samples as the run grows. A plan that advances no
    // step twice never replays, so nothing could be checked: the monitor then fingerprints y_0
    // alone instead of every step — a fingerprint (a 4-way projection and a hash of the state)
    // costs a sizeable part of a step. The first sweep alone advances steps 0 … l−2, and step
    // l−1 too when every step is reversed from its stages; so at most l−1 advances (l in that
    // case) leave none for a replay. Resumable runs keep their fingerprints: a resumed process
    // checks the states it rebuilds against them.
    const bool never_replays =
        plan && !options_.disk.resume &&
        (plan->advances <= plan->steps - 1 ||
         (plan->stage_reverses == plan->steps && plan->advances <= plan->steps));
    DriftMonitor<B> drift(steps, host_size<B>(y0), options_.drift_policy,
                          never_replays ? Index{1} : options_.max_fingerprints);
    if (plan) {
      detail::require_observed_steps_planned(objective_, steps);
      if (plan->steps != steps)
        detail::fail<InvalidArgument>("schedule '", plan->name, "' plans ", plan->steps,
                                      " steps but the run has ", steps);
      DiskStoreOptions disk = options_.disk;
      if (disk.resume) {
        if (plan->disk_slots_used == 0)
          detail::fail<InvalidArgument>("schedule '", plan->name,
                                        "' keeps every snapshot in memory, so a killed run "
                                        "could not be resumed: put snapshots on disk to resume");
        disk.identity = resume_identity(y0, theta, plan->name, plan->steps, schedule_ref.slots());
        disk.progress_bytes = ResumePoint::capacity(schedule_ref.slots(), host_size<B>(y0),
                                                    host_size<B>(theta), drift.saved_bytes());
      }
      if (plan->kind != ScheduleKind::three_level && plan->host_slots_used == 0 &&
          plan->disk_slots_used == 0) {
        store = &reusable_memory_store(static_cast<int>(plan->memory_slots_used), n);
      } else {
        own_store =
            make_snapshot_store<B, Carry>(*plan, n, disk, process_slice<B>(y0), options_.levels);
        store = own_store.get();
      }
      lookahead = make_restore_lookahead(*plan);
      host_lookahead = make_host_restore_lookahead(*plan);
    } else if (!online) {
      detail::fail<InvalidArgument>("a run without a plan needs the online schedule");
    } else if (online_on_disk) {
      // Every snapshot in the file, as for a planned schedule on disk; its reads are started
      // ahead once the run's end is known (below).
      DiskStoreOptions disk = options_.disk;
      if (disk.directory.empty() && disk.file.empty())
        detail::fail<InvalidArgument>("schedule '", online->name(), "' keeps its ", online->slots(),
                                      " snapshots on disk: set the snapshot "
                                      "directory (CheckpointOptions::disk.directory)");
      if (disk.resume) {
        disk.identity = resume_identity(y0, theta, online->name(), -1, online->slots());
        disk.progress_bytes = ResumePoint::capacity(online->slots(), host_size<B>(y0),
                                                    host_size<B>(theta), drift.saved_bytes());
      }
      own_store = std::make_unique<TieredSnapshotStore<B, Carry>>(0, online->slots(), n, disk,
                                                                  process_slice<B>(y0));
      store = own_store.get();
    } else {
      store = &reusable_memory_store(online->slots(), n);
    }
    // The reused memory store, whose slots stage snapshots are computed into directly.
    MemorySnapshotStore<B, Carry>* const in_place =
        store == memory_store_.get() ? memory_store_.get() : nullptr;
    Schedule* schedule = &schedule_ref;
    schedule->reset();
    const auto counted = stepper_.counters();

    Vector y = B::zeros(n), grad = B::zeros(n), lambda = B::zeros(n), mu = B::zeros(p);
    // λ and μ checked for NaN/Inf at their cadences (parameter_gradient_watch.hpp).
    detail::ParameterGradientWatch<B, Stepper> watch(stepper_, n, p, options_.check_finite);
    y_final_ = B::zeros(n);  // y_l, formed at the first reverse; allocated before the loop
    StageSnapshots stages = prepare_stages(*schedule, n);
    final_change_ = std::numeric_limits<double>::quiet_NaN();
    B::copy(y0, y);
    Carry carry = stepper_.initial_carry(y, theta);
    notify(StepKind::start, carry);
    Index reached = 0;  // furthest step of the first sweep
    Index advances = 0, stores = 0, restores = 0, reverses = 0, stage_reverses = 0;
    double loss = observe(carry, y, grad);
    drift.record(0, y);
    bool terminal_done = false;
    Index adjoint_at = steps;  // λ currently holds ∂J/∂y_{adjoint_at} (online: set at the end)
    detail::SweepClock clock;
    using Work = detail::SweepClock::Work;

    auto last_progress = std::chrono::steady_clock::now();
    // The progress of a resumable run at an action boundary (see ResumePoint).
    const auto save_point = [&](Index actions_done) {
      ResumePoint point;
      point.actions_done = actions_done;
      point.position = carry.step;
      point.reached = reached;
      point.adjoint_at = adjoint_at;
      point.steps = steps;  // online: −1 until the end is found
      point.terminal_done = terminal_done ? 1 : 0;
      point.advances = advances;
      point.stores = stores;
      point.restores = restores;
      point.reverses = reverses;
      point.stage_reverses = stage_reverses;
      point.loss = loss;
      point.final_t = final_t_;
      point.final_change = final_change_;
      for (int slot = 0; slot < static_cast<int>(held_.size()); ++slot) {
        const Index step = held_[static_cast<std::size_t>(slot)];
        if (step < 0) continue;
        const bool head = stages.units > 0 && stages.head(slot);
        point.held.push_back({slot, head ? 1 : 0, step});
        if (head) slot += stages.units - 1;  // the rest of its stage vectors
      }
      if (terminal_done) {
        point.lambda = to_host(lambda);
        point.mu = to_host(mu);
        point.y_final = to_host(y_final_);
      }
      drift.save(point.drift, reached);
      store->save_progress(point.encode());
      last_progress = std::chrono::steady_clock::now();
    };
    // After a store or restore on a disk slot: a record when the interval has passed (for a
    // state split across ranks, when the ranks agree that it has: SnapshotStore::progress_due).
    const auto progress_after = [&](int slot, Index actions_done) {
      if (store->persists(slot) &&
          store->progress_due(seconds_since(last_progress) >= options_.progress_interval_seconds))
        save_point(actions_done);
    };
    // Stop requests are agreed by the ranks of a split state (agreed_stop).
    const std::shared_ptr<const SnapshotRanks> ranks = process_slice<B>(y0).ranks;
    Index stop_checks = 0;
    held_.assign(static_cast<std::size_t>(std::max(schedule->slots(), 0)), -1);

    Index first_index = 0;
    const std::vector<std::byte> saved = store->saved_progress();
    if (!saved.empty()) {
      const ResumePoint point = ResumePoint::decode(saved);
      first_index = point.actions_done;
      if (online && (point.steps >= 0) != (point.terminal_done != 0))
        detail::fail<StorageError>("the progress record in ", store->statistics().file,
                                   " does not say consistently whether the run ended");
      for (Index i = 0; i < first_index; ++i) {  // the schedule and its scouts, not executed
        // The online schedule learns the run's length where the probe found it: with y_{l−1}
        // current, before any action for it (as OnlineScheduleEndingAt replays it).
        if (online && point.steps >= 0 && !online->ended() &&
            online->forward_step() + 1 == point.steps)
          online->end_at(point.steps);
        if (lookahead) lookahead->before(i);
        if (host_lookahead) host_lookahead->before(i);
        if (schedule->next().kind == ActionKind::done)
          detail::fail<StorageError>("the progress record in ", store->statistics().file,
                                     " lies beyond the end of schedule '", schedule->name(), "'");
      }
      reached = point.reached;
      adjoint_at = point.adjoint_at;
      if (online) steps = point.steps;
      terminal_done = point.terminal_done != 0;
      advances = point.advances;
      stores = point.stores;
      restores = point.restores;
      reverses = point.reverses;
      stage_reverses = point.stage_reverses;
      loss = point.loss;
      final_t_ = point.final_t;
      final_change_ = point.final_change;
      if (!drift.load(point.drift) ||
          (terminal_done && (!from_host(point.lambda, lambda) || !from_host(point.mu, mu) ||
                             !from_host(point.y_final, y_final_))))
        detail::fail<StorageError>("the progress record in ", store->statistics().file,
                                   " does not fit this run's sizes");
      rebuild(point, y0, theta, *store, stages, drift, y, carry, result);
      result.resumed_at_action = first_index;
    }

    // Online forward phase: y_{n+1} is computed into the y_l buffer before the schedule is asked
    // about y_n, so that it decides knowing whether the run goes on (OnlineSchedule's model).
    bool probed = false;
    Carry probe_carry = carry;
    for (Index index = first_index;; ++index) {
      if (const int signal = agreed_stop(ranks.get(), stop_checks); signal >= 0)
        stop_here(signal, index, carry, adjoint_at, terminal_done, steps, *store, save_point);
      if (online && !online->ended() && !probed) {
        clock.enter(Work::forward);
        B::copy(y, y_final_);
        probe_carry = carry;
        stepper_.step(y_final_, probe_carry, theta);
        if (options_.check_finite) detail::require_finite_state<B>(y_final_, probe_carry);
        notify(StepKind::forward, probe_carry);
        if (run_end_.ends_at(probe_carry, y_final_)) {
          steps = probe_carry.step;
          online->end_at(steps);
          detail::require_observed_steps_taken(objective_, steps, probe_carry.t);
          close_run(y, carry, theta, probe_carry, grad, lambda, loss);
          terminal_done = true;
          adjoint_at = steps;
        } else {
          probed = true;
        }
      }
      // Online on disk: from its end on the online schedule's actions are fixed, so a copy of it
      // runs ahead and the disk reads start early, as for a planned schedule.
      if (online_on_disk && online->ended() && !lookahead)
        lookahead.emplace(RestoreLookahead::continuing(online->copy_in_state(), index, 0));
      if (lookahead)
        if (const auto fetch = lookahead->before(index)) store->prefetch(fetch->slot, fetch->step);
      if (host_lookahead)
        if (const auto fetch = host_lookahead->before(index))
          store->prefetch(fetch->slot, fetch->step);
      const Action action = schedule->next();
      if (action.kind == ActionKind::done) break;
      switch (action.kind) {
        case ActionKind::advance: {
          if (online && !online->ended()) {
            // The online forward phase: y_{n+1}, probed above, becomes current.
            clock.enter(Work::forward);
            if (!probed || action.step != carry.step + 1)
              detail::fail<InvalidArgument>("online schedule advances from step ", carry.step,
                                            " to ", action.step);
            std::swap(y, y_final_);
            carry = probe_carry;
            probed = false;
            ++advances;
            reached = carry.step;
            drift.record(carry.step, y);
            loss += observe(carry, y, grad);
            break;
          }
          if (action.step <= carry.step || (steps >= 0 && action.step > steps))
            detail::fail<InvalidArgument>("schedule advances from step ", carry.step, " to ",
                                          action.step);
          const bool first = carry.step >= reached;
          clock.enter(first ? Work::forward : Work::recompute);
          while (carry.step < action.step) {
            // A stop inside a long advance: a resumed run re-issues this advance from here.
            if (const int signal = agreed_stop(ranks.get(), stop_checks); signal >= 0)
              stop_here(signal, index, carry, adjoint_at, terminal_done, steps, *store, save_point);
            stepper_.step(y, carry, theta);
            ++advances;
            if (options_.check_finite) detail::require_finite_state<B>(y, carry);
            notify(carry.step > reached ? StepKind::forward : StepKind::recompute, carry);
            if (carry.step > reached) {
              reached = carry.step;
              drift.record(carry.step, y);
              loss += observe(carry, y, grad);
            } else {
              drift.check(carry.step, carry.t, y);
            }
          }
          break;
        }
        case ActionKind::store:
          if (action.step != carry.step)
            detail::fail<InvalidArgument>("schedule stores y_", action.step, " but the state is y_",
                                          carry.step);
          store->store(action.slot, carry.step, y, carry);
          held_[static_cast<std::size_t>(action.slot)] = carry.step;
          ++stores;
          progress_after(action.slot, index + 1);
          break;
        case ActionKind::restore:
          store->restore(action.slot, action.step, y, carry);
          if (carry.step != action.step)
            detail::fail<StorageError>("restoring y_", action.step, " from slot ", action.slot,
                                       " gave the carry of step ", carry.step);
          ++restores;
          progress_after(action.slot, index + 1);
          break;
        case ActionKind::free:
          if (stages.head(action.slot)) {
            for (int i = 0; i < stages.units; ++i) {
              store->free(action.slot + i);
              held_[static_cast<std::size_t>(action.slot + i)] = -1;
            }
            stages.head(action.slot) = false;
          } else {
            store->free(action.slot);
            held_[static_cast<std::size_t>(action.slot)] = -1;
          }
          break;
        case ActionKind::store_stages: {
          if constexpr (StageKeepingStepper<Stepper>) {
            if (action.step != carry.step || action.step >= steps)
              detail::fail<InvalidArgument>("schedule stores the stages of step ", action.step,
                                            " but the state is y_", carry.step);
            clock.enter(carry.step >= reached ? Work::forward : Work::recompute);
            const Carry at = carry;
            // In memory the stage values go straight into their slots (streamed out of the step,
            // or built there: ExplicitRungeKutta::step_keeping_stages), with no copy by the store.
            const std::span<Vector> into =
                in_place ? in_place->free_slots_for_writing(action.slot, stages.units, at.step)
                         : std::span<Vector>(stages.vectors);
            if (carry.step == steps - 1) {
              // The last step: y_l closes the run; the state kept is y_{l−1}, which nothing reads.
              Carry last = carry;
              B::copy(y, y_final_);
              stepper_.step_keeping_stages(y_final_, last, theta, into);
              if (options_.check_finite) detail::require_finite_state<B>(y_final_, last);
              notify(last.step > reached ? StepKind::forward : StepKind::recompute, last);
              if (!terminal_done) close_run(y, carry, theta, last, grad, lambda, loss);
              terminal_done = true;
              reached = steps;
            } else {
              stepper_.step_keeping_stages(y, carry, theta, into);
              if (options_.check_finite) detail::require_finite_state<B>(y, carry);
              notify(carry.step > reached ? StepKind::forward : StepKind::recompute, carry);
              if (carry.step > reached) {
                reached = carry.step;
                drift.record(carry.step, y);
                loss += observe(carry, y, grad);
              } else {
                drift.check(carry.step, carry.t, y);
              }
            }
            ++advances;
            for (int i = 0; i < stages.units; ++i) {
              if (in_place)
                in_place->stored_in_place(action.slot + i, at.step, at);
              else
                store->store(action.slot + i, at.step, into[static_cast<std::size_t>(i)], at);
              held_[static_cast<std::size_t>(action.slot + i)] = at.step;
            }
            stages.head(action.slot) = true;
            progress_after(action.slot, index + 1);
          }
          break;
        }
        case ActionKind::reverse: {
          clock.enter(Work::reverse);
          if (action.uses_stages()) {
            if constexpr (StageKeepingStepper<Stepper>) {
              if (action.step != adjoint_at - 1 || !terminal_done || !stages.head(action.slot))
                detail::fail<InvalidArgument>("schedule reverses step ", action.step,
                                              " from the stages in slot ", action.slot,
                                              " with the adjoint at step ", adjoint_at);
              Carry at;
              std::span<const Vector> from;
              if (in_place) {
                from = in_place->held_slots(action.slot, stages.units, action.step, at);
              } else {
                for (int i = 0; i < stages.units; ++i)
                  store->restore(action.slot + i, action.step,
                                 stages.vectors[static_cast<std::size_t>(i)], at);
                from = stages.vectors;
              }
              if (at.step != action.step)
                detail::fail<StorageError>("the stages of step ", action.step, " in slot ",
                                           action.slot, " carry step ", at.step);
              stepper_.adjoint_step_from_stages(from, at, theta, lambda, mu);
              if (objective_.observes(at.step, at.t)) {
                objective_.observation(at.step, at.t, from[0], grad);
                B::axpy(1.0, grad, lambda);
              }
              watch.after_reverse(lambda, mu, at, adjoint_at == 1);
              notify(StepKind::reverse, at);
              --adjoint_at;
              ++reverses;
              ++stage_reverses;
            }
            break;
          }
          if (action.step != carry.step || action.step != adjoint_at - 1)
            detail::fail<InvalidArgument>("schedule reverses step ", action.step,
                                          " with the state at step ", carry.step,
                                          " and the adjoint at step ", adjoint_at);
          if (!terminal_done) {
            Carry last = carry;
            B::copy(y, y_final_);
            stepper_.step(y_final_, last, theta);
            if (options_.check_finite) detail::require_finite_state<B>(y_final_, last);
            notify(last.step > reached ? StepKind::forward : StepKind::recompute, last);
            close_run(y, carry, theta, last, grad, lambda, loss);
            terminal_done = true;
          }
          if (action.step == steps - 1)
            run_end_.reverse_last(y, carry, theta, y_final_, final_t_, lambda, mu);
          else
            stepper_.adjoint_step(y, carry, theta, lambda, mu);
          if (objective_.observes(carry.step, carry.t)) {
            objective_.observation(carry.step, carry.t, y, grad);
            B::axpy(1.0, grad, lambda);
          }
          watch.after_reverse(lambda, mu, carry, adjoint_at == 1);
          notify(StepKind::reverse, carry);
          --adjoint_at;
          ++reverses;
          break;
        }
        case ActionKind::done:
          break;
      }
    }
    clock.stop();
    if (reverses != steps || adjoint_at != 0)
      detail::fail<InvalidArgument>("schedule '", schedule->name(), "' ended after reversing ",
                                    reverses, " of ", steps, " steps");
    store->finish();    // every background write done; a failed one is an error even now
    store->complete();  // a resumable run's file may go now

    const auto& total = stepper_.counters();
    summary.method = detail::describe_method(stepper_);
    summary.schedule = schedule->name();
    summary.backend = B::name;
    summary.threads = thread_count();
    summary.ranks = process_count<B>();
    summary.state_size = n;
    summary.parameter_size = p;
    summary.steps = steps;
    summary.rejected_steps = total.rejected_attempts;
    // l + p (see summary.hpp); a reverse from stages re-runs no step.
    summary.forward_steps = advances + reverses - stage_reverses;
    summary.recomputed_steps = advances - stage_reverses;  // p: beyond the l each step needs
    summary.reversed_steps = reverses;
    summary.rhs_evaluations_forward = total.rhs_evaluations - counted.rhs_evaluations;
    summary.rhs_evaluations_reverse = 0;  // not separable here: included in the forward count
    summary.vjp_evaluations = total.vjp_evaluations;
    summary.stores = stores;
    summary.restores = restores;
    summary.storage = store->statistics();
    summary.forward_seconds = clock.seconds(Work::forward);
    summary.recompute_seconds = clock.seconds(Work::recompute);
    summary.reverse_seconds = clock.seconds(Work::reverse);
    summary.t_final = final_t_;
    if (options_.assess_health)
      summary.health = assess_gradient<B>(loss, y0, theta, lambda, mu, final_change_, steps);

    result.loss = loss;
    result.grad_y0 = std::move(lambda);
    result.grad_theta = std::move(mu);
    result.y_final = std::move(y_final_);
    result.drift = drift.report();
    return result;
  }

  // What a resumable snapshot file must agree on with the run continuing it: the caller's text,
  // then the sizes, y_0 and θ (hashed), the method, the plan and the drift monitor's budget.
  // `steps` < 0: a run of unknown length (the online schedule).
  std::string resume_identity(const Vector& y0, const Vector& theta, const std::string& schedule,
                              Index steps, int slots) const {
    std::ostringstream out;
    out << options_.disk.identity;
    if (!options_.disk.identity.empty() && options_.disk.identity.back() != '\n') out << '\n';
    out << "state size = " << host_size<B>(y0) << "\nparameter size = " << host_size<B>(theta)
        << "\ny0 hash = " << std::hex << host_hash(y0) << "\ntheta hash = " << host_hash(theta)
        << std::dec << "\nmethod = " << detail::describe_method(stepper_)
        << "\nschedule = " << schedule
        << "\nsteps = " << (steps < 0 ? std::string("unknown") : std::to_string(steps))
        << "\nslots = " << slots << "\nfingerprints = " << options_.max_fingerprints << '\n';
    return out.str();
  }

  // FNV-1a over the bytes of a host copy (an identity check, not a checksum of data at rest).
  static std::uint64_t host_hash(const Vector& v) {
    const std::vector<double> host = to_host(v);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto* bytes = reinterpret_cast<const unsigned char*>(host.data());
    for (std::size_t i = 0; i < host.size() * sizeof(double); ++i)
      h = (h ^ bytes[i]) * 0x100000001b3ULL;
    return h;
  }
  static std::vector<double> to_host(const Vector& v) {
    std::vector<double> host(static_cast<std::size_t>(host_size<B>(v)));
    B::copy_to_host(v, std::span<double>(host));
    return host;
  }
  static bool from_host(const std::vector<double>& host, Vector& v) {
    if (static_cast<Index>(host.size()) != host_size<B>(v)) return false;
    B::copy_from_host(std::span<const double>(host), v);
    return true;
  }

  // The signal of a pending stop request (rwd::request_stop, a signal), −1 when none. For a state
  // split across ranks it is agreed (the lowest requesting rank's): a rank that stopped alone
  // would leave the others waiting in the next step's halo exchange. The ranks agree at every
  // kStopAgreementEvery-th step boundary (`checks` counts them, alike on every rank), so a stop
  // waits at most that many steps: one small all-gather each time (0.4 µs with 2 ranks, 7 µs with
  // 4 oversubscribed ranks on a 2-core machine). Gray–Scott n = 24 with 2 and 4 ranks on that
  // machine showed no difference within its noise between every boundary and every 8th
  // (bench/results/resume.md); every 8th bounds the added collectives on a slower network.
  static constexpr Index kStopAgreementEvery = 8;
  static int agreed_stop(const SnapshotRanks* ranks, Index& checks) {
    const int mine = stop_signal();
    if (!ranks || ranks->size() <= 1) return mine;
    if (++checks % kStopAgreementEvery != 0) return -1;
    const std::int64_t value = mine;
    for (const std::int64_t each : ranks->all_gather(std::span(&value, 1)))
      if (each >= 0) return static_cast<int>(each);
    return -1;
  }

  // A stop was requested (rwd::request_stop, a signal): a resumable run saves its progress at
  // this action boundary and waits for its writes; then rwd::Interrupted says where it stopped.
  template <class Save>
  [[noreturn]] void stop_here(int signal, Index index, const Carry& carry, Index adjoint_at,
                              bool terminal_done, Index steps, SnapshotStore<B, Carry>& store,
                              const Save& save_point) {
    std::ostringstream where;
    if (terminal_done)
      where << "in the reverse sweep (the adjoint at step " << adjoint_at << " of " << steps << ")";
    else
      where << "in the forward sweep (at step " << carry.step;
    if (!terminal_done) where << (steps >= 0 ? " of " + std::to_string(steps) : "") << ")";
    if (store.resumable()) {
      // The writes before the record first: for a split state every rank then holds the record
      // before this one, whichever ranks a kill during the write below leaves without it.
      store.finish();
      save_point(index);
      store.finish();
      throw Interrupted("stopped by " + signal_name(signal) + " " + where.str() +
                            "; its progress and disk snapshots are in " + store.statistics().file +
                            ": run it again with resume to continue",
                        signal);
    }
    throw Interrupted("stopped by " + signal_name(signal) + " " + where.str() +
                          "; nothing was kept to resume from (the run was not resumable)",
                      signal);
  }

  // A resumed run: puts back every snapshot the killed process held when it saved `point` —
  // adopted from the file where intact, otherwise recomputed from the nearest earlier snapshot
  // (or y_0) — and the state at point.position into (y, carry). Each recomputed step is checked
  // by the drift monitor against the killed process's first sweep.
  template <class Stages>
  void rebuild(const ResumePoint& point, const Vector& y0, const Vector& theta,
               SnapshotStore<B, Carry>& store, Stages& stages, DriftMonitor<B>& drift, Vector& y,
               Carry& carry, CheckpointedResult<Vector>& result) {
    std::vector<ResumePoint::Held> held = point.held;
    for (const ResumePoint::Held& h : held)
      if (h.slot < 0 || static_cast<std::size_t>(h.slot) >= held_.size() || h.step < 0 ||
          h.step > point.reached || (h.stage_head && stages.units == 0))
        detail::fail<StorageError>("the progress record names slot ", h.slot, " holding y_", h.step,
                                   ", which this run's schedule cannot have");
    if (point.position < 0 || point.position > point.reached)
      detail::fail<StorageError>("the progress record puts the run at step ", point.position,
                                 " beyond the ", point.reached, " steps it took");
    std::sort(held.begin(), held.end(),
              [](const auto& a, const auto& b) { return a.step < b.step; });
    std::vector<std::pair<Index, int>> intact;  // (step, slot), ascending
    for (const ResumePoint::Held& h : held)
      if (!h.stage_head && store.adopt(h.slot, h.step)) {
        intact.emplace_back(h.step, h.slot);
        held_[static_cast<std::size_t>(h.slot)] = h.step;
        ++result.adopted_snapshots;
      }
    Vector walk = B::zeros(stepper_.state_size());
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
        at = stepper_.initial_carry(walk, theta);
      }
      started = true;
      while (at.step < target) {
        stepper_.step(walk, at, theta);
        ++result.resume_replayed_steps;
        if (options_.check_finite) detail::require_finite_state<B>(walk, at);
        notify(StepKind::recompute, at);
        drift.check(at.step, at.t, walk);
      }
    };
    for (const ResumePoint::Held& h : held) {
      if (held_[static_cast<std::size_t>(h.slot)] == h.step) continue;  // adopted
      bring_to(h.step);
      if (!h.stage_head) {
        store.store(h.slot, h.step, walk, at);
        held_[static_cast<std::size_t>(h.slot)] = h.step;
        continue;
      }
      if constexpr (StageKeepingStepper<Stepper>) {
        const Carry of_step = at;
        stepper_.step_keeping_stages(walk, at, theta, stages.vectors);
        ++result.resume_replayed_steps;
        notify(StepKind::recompute, at);
        for (int i = 0; i < stages.units; ++i) {
          store.store(h.slot + i, of_step.step, stages.vectors[static_cast<std::size_t>(i)],
                      of_step);
          held_[static_cast<std::size_t>(h.slot + i)] = of_step.step;
        }
        stages.head(h.slot) = true;  // (y_{step+1} past y_{l−1} was never fingerprinted)
      }
    }
    bring_to(point.position);
    B::copy(walk, y);
    carry = at;
  }

  // The stage snapshots of a stage-aware plan: which slots begin one, and the stepper's stage
  // vectors to fill and read (allocated before the loop).
  struct StageSnapshots {
    int units = 0;
    std::vector<Vector> vectors;
    std::vector<char> heads;
    char& head(int slot) { return heads[static_cast<std::size_t>(slot)]; }
  };

  StageSnapshots prepare_stages(const Schedule& schedule, Index n) {
    StageSnapshots stages;
    stages.heads.assign(static_cast<std::size_t>(std::max(schedule.slots(), 0)), 0);
    stages.units = schedule.stage_units();
    if (stages.units == 0) return stages;
    if constexpr (StageKeepingStepper<Stepper>) {
      if (stages.units != stepper_.stage_count())
        detail::fail<InvalidArgument>("schedule '", schedule.name(), "' keeps ", stages.units,
                                      " vectors per stage snapshot but the method has ",
                                      stepper_.stage_count(), " stages");
      if (!run_end_.length_known())
        detail::fail<InvalidArgument>("schedule '", schedule.name(),
                                      "' keeps stage values, which needs a run of fixed steps "
                                      "without a stop condition");
      for (int i = 0; i < stages.units; ++i) stages.vectors.push_back(B::zeros(n));
    } else {
      detail::fail<InvalidArgument>("schedule '", schedule.name(),
                                    "' keeps stage values, but this stepper cannot hand them out "
                                    "(it is no rwd::StageKeepingStepper: stage_count, "
                                    "step_keeping_stages, adjoint_step_from_stages)");
    }
    return stages;
  }

  void notify(StepKind kind, const Carry& at) const {
    detail::notify(options_.observer, kind, at.step, at.t);
  }

  double observe(const Carry& carry, const Vector& y, Vector& grad) {
    if (!objective_.observes(carry.step, carry.t)) return 0.0;
    const double value = objective_.observation(carry.step, carry.t, y, grad);
    detail::require_finite_value(value, "observation term", carry.step, carry.t);
    return value;
  }

  // y_l is in y_final_ (the ordinary step from y_{l−1} = y, carry `last`): shortened to the
  // event if the stop condition locates one, then the terminal cost, its gradient into λ, an
  // observation at l, and how much the last step changed the state (Summary::health). The loss
  // is summed in StoreAllAdjoint's order (observations by step, then the terminal cost), so the
  // two drivers agree bit for bit.
  void close_run(const Vector& y, const Carry& carry, const Vector& theta, Carry last, Vector& grad,
                 Vector& lambda, double& loss) {
    run_end_.finish(y, carry, theta, y_final_, last);
    if (options_.check_finite) detail::require_finite_state<B>(y_final_, last);
    detail::require_observed_steps_taken(objective_, last.step, last.t);
    final_t_ = last.t;
    final_change_ = relative_step_change<B>(y_final_, y);
    loss += observe(last, y_final_, grad);
    const double g = objective_.terminal(last.t, y_final_, grad);
    detail::require_finite_value(g, "terminal cost", last.step, last.t);
    loss += g;
    B::copy(grad, lambda);
    if (objective_.observes(last.step, last.t)) {
      objective_.observation(last.step, last.t, y_final_, grad);
      B::axpy(1.0, grad, lambda);
    }
  }

  Index count_steps(const Vector& y0, const Vector& theta) {
    Vector y = B::zeros(B::size(y0));
    B::copy(y0, y);
    Carry carry = stepper_.initial_carry(y, theta);
    notify(StepKind::start, carry);
    do {
      stepper_.step(y, carry, theta);
      if (options_.check_finite) detail::require_finite_state<B>(y, carry);
      notify(StepKind::forward, carry);
    } while (!run_end_.ends_at(carry, y));
    detail::require_observed_steps_taken(objective_, carry.step, carry.t);
    return carry.step;
  }

  Stepper& stepper_;
  Objective<Backend> objective_;
  CheckpointOptions options_;
  detail::RunEnd<Stepper> run_end_;
  // The memory store of the last memory-only run, kept for the next: a store of many slots
  // (store-all with stages holds l·s states) costs more to allocate and first touch than the
  // forward sweep that fills it, so it is allocated again only when the slots or the state size
  // change — as StoreAllAdjoint keeps its stored states. Emptied (reset) before each run.
  MemorySnapshotStore<B, Carry>& reusable_memory_store(int slots, Index state_size) {
    slots = std::max(slots, 1);
    if (memory_store_ && memory_store_->slots() == slots &&
        memory_store_->state_size() == state_size) {
      memory_store_->reset();
    } else {
      memory_store_.reset();  // the old one goes first: never both at once
      memory_store_ = std::make_unique<MemorySnapshotStore<B, Carry>>(slots, state_size);
    }
    return *memory_store_;
  }
  std::unique_ptr<MemorySnapshotStore<B, Carry>> memory_store_;

  Vector y_final_;
  std::vector<Index> held_;  // the step each schedule slot holds, −1 when free (resumable runs)
  double final_t_ = 0.0;
  double final_change_ = 0.0;  // ‖y_l − y_{l−1}‖ / ‖y_l‖, set at the first reverse
};

}  // namespace rwd
