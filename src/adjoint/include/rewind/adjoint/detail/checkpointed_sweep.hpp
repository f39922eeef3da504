// rewind/adjoint/detail/checkpointed_sweep.hpp — one run of rwd::CheckpointedAdjoint: a schedule's
// action stream executed on a store, one executor per action kind (advance, store, restore,
// free, store_stages, reverse), over a sweep state (rwd::SweepState) that the progress record of
// a resumable run saves and restores whole. Internal to rwd::CheckpointedAdjoint; its top comment
// says what the run does.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/checkpoint_options.hpp"
#include "rewind/adjoint/detail/adjoint_steps.hpp"
#include "rewind/adjoint/detail/describe_method.hpp"
#include "rewind/adjoint/detail/resume_journal.hpp"
#include "rewind/adjoint/detail/resume_rebuild.hpp"
#include "rewind/adjoint/detail/stage_snapshots.hpp"
#include "rewind/adjoint/detail/summary_finisher.hpp"
#include "rewind/adjoint/detail/sweep_clock.hpp"
#include "rewind/adjoint/detail/sweep_store.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/parameter_gradient_watch.hpp"
#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/run_end.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/sweep_state.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/store/snapshot_ranks.hpp"

namespace rwd::detail {

// What a sweep runs: a planned schedule (`plan` given, `steps` = l) or the online schedule
// (`plan` null, `steps` = −1 until the run ends; its snapshots in memory, or all on disk). The
// schedule is reset before the sweep is made.
struct SweepPlan {
  Schedule& schedule;
  const CheckpointPlan* plan = nullptr;
  Index steps = -1;
  bool online_on_disk = false;
};

// What a sweep works with, owned by the driver.
template <class Stepper>
struct SweepContext {
  using B = typename Stepper::Backend;
  Stepper& stepper;
  const Objective<B>& objective;
  const CheckpointOptions& options;
  RunEnd<Stepper>& run_end;
  MemoryStoreCache<B>& memory;
};

template <class Stepper>
class CheckpointedSweep {
 public:
  using B = typename Stepper::Backend;
  using Vector = typename B::Vector;

  CheckpointedSweep(const SweepContext<Stepper>& context, const SweepPlan& what, const Vector& y0,
                    const Vector& theta)
      : stepper_(context.stepper),
        objective_(context.objective),
        options_(context.options),
        run_end_(context.run_end),
        y0_(y0),
        theta_(theta),
        schedule_(what.schedule),
        plan_(what.plan),
        online_(dynamic_cast<OnlineSchedule*>(&what.schedule)),
        online_on_disk_(what.online_on_disk),
        adjoint_(stepper_, objective_, run_end_, options_.observer, options_.check_finite),
        drift_(what.steps, host_size<B>(y0), options_.drift_policy, fingerprints(what.plan)),
        store_(open_store(what, context.memory)),
        n_(stepper_.state_size()),
        y_(B::zeros(n_)),
        grad_(B::zeros(n_)),
        lambda_(B::zeros(n_)),
        mu_(B::zeros(stepper_.parameter_size())),
        watch_(stepper_, n_, stepper_.parameter_size(), options_.check_finite),
        y_final_(B::zeros(n_)),
        stages_(prepare_stages(schedule_, n_, stepper_, run_end_.length_known())),
        journal_(schedule_.slots(), options_.progress_interval_seconds,
                 process_slice<B>(y0).ranks) {
    result_.counting_steps = plan_ && !run_end_.length_known() ? what.steps : 0;
    state_.steps = what.steps;
    state_.adjoint_at = what.steps;
  }

  CheckpointedResult<Vector> run() {
    counted_ = stepper_.counters();
    start();
    const Index first = resume();
    for (Index index = first;; ++index) {
      before_action(index);
      const Action action = schedule_.next();
      if (action.kind == ActionKind::done) break;
      execute(action, index);
    }
    clock_.stop(stepper_.counters().rhs_evaluations);
    return finish();
  }

 private:
  using Work = SweepClock::Work;

  // The kind of work from here on (time and rhs evaluations are attributed to it).
  void enter(Work w) {
    clock_.enter(w, [this] { return stepper_.counters().rhs_evaluations; });
  }

  // Unknown length: the monitor thins its samples as the run grows. A plan that advances no
  // step twice never replays, so nothing could be checked: the monitor then fingerprints y_0
  // alone instead of every step — a fingerprint (a 4-way projection and a hash of the state)
  // costs a sizeable part of a step. The first sweep alone advances steps 0 … l−2, and step
  // l−1 too when every step is reversed from its stages; so at most l−1 advances (l in that
  // case) leave none for a replay. Resumable runs keep their fingerprints: a resumed process
  // checks the states it rebuilds against them.
  Index fingerprints(const CheckpointPlan* plan) const {
    const bool never_replays =
        plan && !options_.disk.resume &&
        (plan->advances <= plan->steps - 1 ||
         (plan->stage_reverses == plan->steps && plan->advances <= plan->steps));
    return never_replays ? Index{1} : options_.max_fingerprints;
  }

  // The store the plan asks for, or the online schedule's; checks the request first.
  SweepStore<B> open_store(const SweepPlan& what, MemoryStoreCache<B>& memory) {
    const Index n = stepper_.state_size();
    if (plan_) {
      require_observed_steps_planned(objective_, what.steps);
      if (plan_->steps != what.steps)
        fail<InvalidArgument>("schedule '", plan_->name, "' plans ", plan_->steps,
                              " steps but the run has ", what.steps);
      if (options_.disk.resume && plan_->slots_used_on(LevelKind::disk) == 0)
        fail<InvalidArgument>("schedule '", plan_->name,
                              "' keeps every snapshot in memory, so a killed run could not be "
                              "resumed: put snapshots on disk to resume");
      return open_planned_store<B>(*plan_, n, disk_options(plan_->name, plan_->steps),
                                   process_slice<B>(y0_), options_.levels, memory);
    }
    if (!online_) fail<InvalidArgument>("a run without a plan needs the online schedule");
    if (online_on_disk_ && options_.disk.directory.empty() && options_.disk.file.empty())
      fail<InvalidArgument>("schedule '", online_->name(), "' keeps its ", online_->slots(),
                            " snapshots on disk: set the snapshot directory "
                            "(CheckpointOptions::disk.directory)");
    const DiskStoreOptions disk =
        online_on_disk_ ? disk_options(online_->name(), -1) : options_.disk;
    return open_online_store<B>(*online_, online_on_disk_, n, disk, process_slice<B>(y0_), memory);
  }

  // The disk options, with a resumable run's identity and record size.
  DiskStoreOptions disk_options(const std::string& schedule, Index steps) const {
    DiskStoreOptions disk = options_.disk;
    if (!disk.resume) return disk;
    disk.identity =
        ResumeJournal<B>::identity(options_.disk.identity, y0_, theta_, describe_method(stepper_),
                                   schedule, steps, schedule_.slots(), options_.max_fingerprints);
    disk.progress_bytes = ResumePoint::capacity(schedule_.slots(), host_size<B>(y0_),
                                                host_size<B>(theta_), drift_.saved_bytes());
    return disk;
  }

  // y_0, its observation and fingerprint: the sweep's start.
  void start() {
    B::copy(y0_, y_);
    carry_ = stepper_.initial_carry(y_, theta_);
    notify(options_.observer, StepKind::start, carry_.step, carry_.t);
    state_.loss = adjoint_.observe(carry_, y_, grad_);
    drift_.record(0, y_);
  }

  // A resumable run that finds a progress record goes on from it: the schedule (and its scouts)
  // replayed to the recorded action without executing it, the sweep state restored whole, the
  // snapshots and the current state rebuilt. Returns the first action to execute.
  Index resume() {
    const std::vector<std::byte> saved = store_->saved_progress();
    if (saved.empty()) return 0;
    const ResumePoint point = ResumePoint::decode(saved);
    const SweepState& was = point.sweep;
    if (online_ && (was.steps >= 0) != was.terminal_done)
      fail<StorageError>("the progress record in ", store_->statistics().file,
                         " does not say consistently whether the run ended");
    for (Index i = 0; i < point.actions_done; ++i) {
      // The online schedule learns the run's length where the probe found it: with y_{l−1}
      // current, before any action for it (as OnlineScheduleEndingAt replays it).
      if (online_ && was.steps >= 0 && !online_->ended() &&
          online_->forward_step() + 1 == was.steps)
        online_->end_at(was.steps);
      store_.skip_before(i);
      if (schedule_.next().kind == ActionKind::done)
        fail<StorageError>("the progress record in ", store_->statistics().file,
                           " lies beyond the end of schedule '", schedule_.name(), "'");
    }
    const Index steps = online_ ? was.steps : state_.steps;
    state_ = was;
    state_.steps = steps;
    if (!drift_.load(point.drift) ||
        (state_.terminal_done && (!ResumeJournal<B>::from_host(point.lambda, lambda_) ||
                                  !ResumeJournal<B>::from_host(point.mu, mu_) ||
                                  !ResumeJournal<B>::from_host(point.y_final, y_final_))))
      fail<StorageError>("the progress record in ", store_->statistics().file,
                         " does not fit this run's sizes");
    const RebuildTarget<Stepper> target{stepper_, *store_.store,         stages_,          drift_,
                                        journal_, options_.check_finite, options_.observer};
    const Rebuilt rebuilt = rebuild(target, point, y0_, theta_, y_, carry_);
    result_.adopted_snapshots = rebuilt.adopted;
    result_.resume_replayed_steps = rebuilt.replayed;
    result_.resumed_at_action = point.actions_done;
    probe_carry_ = carry_;
    return point.actions_done;
  }

  // At the boundary before action `index`: a stop request honoured, the online forward phase's
  // next step probed, the reads of coming restores started.
  void before_action(Index index) {
    stop_if_requested(index);
    if (online_ && !online_->ended() && !probed_) probe_online();
    // Online on disk: from its end on the online schedule's actions are fixed, so a copy of it
    // runs ahead and the disk reads start early, as for a planned schedule.
    if (online_on_disk_ && online_->ended() && store_.lookaheads.empty())
      store_.lookaheads.push_back(RestoreLookahead::continuing(online_->copy_in_state(), index, 0));
    store_.prefetch_before(index);
  }

  void stop_if_requested(Index index) {
    if (const int signal = journal_.agreed_stop(); signal >= 0)
      ResumeJournal<B>::stop_here(signal, carry_, state_, *store_.store,
                                  [&] { save_progress(index); });
  }

  // The progress record of a resumable run at the boundary before action `actions_done`.
  void save_progress(Index actions_done) {
    const auto head = [this](int slot) { return stages_.head(slot); };
    journal_.save(*store_.store, journal_.point(actions_done, carry_.step, state_, head,
                                                stages_.units, lambda_, mu_, y_final_, drift_));
  }

  // After a store into or a restore from `slot`: a record when one is due.
  void progress_after(int slot, Index actions_done) {
    if (journal_.due(*store_.store, slot)) save_progress(actions_done);
  }

  // Online forward phase: y_{n+1} is computed into the y_l buffer before the schedule is asked
  // about y_n, so that it decides knowing whether the run goes on (OnlineSchedule's model). If
  // the run ends there that buffer is y_l and the current state stays y_{l−1}.
  void probe_online() {
    enter(Work::forward);
    B::copy(y_, y_final_);
    probe_carry_ = carry_;
    stepper_.step(y_final_, probe_carry_, theta_);
    if (options_.check_finite) require_finite_state<B>(y_final_, probe_carry_);
    notify(options_.observer, StepKind::forward, probe_carry_.step, probe_carry_.t);
    if (!run_end_.ends_at(probe_carry_, y_final_)) {
      probed_ = true;
      return;
    }
    state_.steps = probe_carry_.step;
    online_->end_at(state_.steps);
    require_observed_steps_taken(objective_, state_.steps, probe_carry_.t);
    close_run(probe_carry_);
    state_.adjoint_at = state_.steps;
  }

  void execute(const Action& action, Index index) {
    switch (action.kind) {
      case ActionKind::advance:
        if (online_ && !online_->ended())
          advance_online(action);
        else
          advance(action, index);
        break;
      case ActionKind::store:
        store(action, index);
        break;
      case ActionKind::restore:
        restore(action, index);
        break;
      case ActionKind::free:
        free(action);
        break;
      case ActionKind::store_stages:
        store_stages(action, index);
        break;
      case ActionKind::reverse:
        enter(Work::reverse);
        if (action.uses_stages())
          reverse_from_stages(action);
        else
          reverse(action);
        break;
      case ActionKind::done:
        break;
    }
  }

  // The online forward phase: y_{n+1}, probed before the action, becomes current.
  void advance_online(const Action& action) {
    enter(Work::forward);
    if (!probed_ || action.step != carry_.step + 1)
      fail<InvalidArgument>("online schedule advances from step ", carry_.step, " to ",
                            action.step);
    std::swap(y_, y_final_);
    carry_ = probe_carry_;
    probed_ = false;
    ++state_.advances;
    state_.reached = carry_.step;
    drift_.record(carry_.step, y_);
    state_.loss += adjoint_.observe(carry_, y_, grad_);
  }

  void advance(const Action& action, Index index) {
    if (action.step <= carry_.step || (state_.steps >= 0 && action.step > state_.steps))
      fail<InvalidArgument>("schedule advances from step ", carry_.step, " to ", action.step);
    enter(carry_.step >= state_.reached ? Work::forward : Work::recompute);
    while (carry_.step < action.step) {
      // A stop inside a long advance: a resumed run re-issues this advance from here.
      stop_if_requested(index);
      stepper_.step(y_, carry_, theta_);
      ++state_.advances;
      after_step(y_, carry_);
    }
  }

  // After a step of the sweep to (y, carry): finite, observed; a first visit is recorded and
  // its observation summed, a revisit checked against the record.
  void after_step(const Vector& y, const Carry& carry) {
    if (options_.check_finite) require_finite_state<B>(y, carry);
    const bool first = carry.step > state_.reached;
    notify(options_.observer, first ? StepKind::forward : StepKind::recompute, carry.step, carry.t);
    if (first) {
      state_.reached = carry.step;
      drift_.record(carry.step, y);
      state_.loss += adjoint_.observe(carry, y, grad_);
    } else {
      drift_.check(carry.step, carry.t, y);
    }
  }

  void store(const Action& action, Index index) {
    if (action.step != carry_.step)
      fail<InvalidArgument>("schedule stores y_", action.step, " but the state is y_", carry_.step);
    store_->store(action.slot, carry_.step, y_, carry_);
    journal_.hold(action.slot, carry_.step);
    ++state_.stores;
    progress_after(action.slot, index + 1);
  }

  void restore(const Action& action, Index index) {
    store_->restore(action.slot, action.step, y_, carry_);
    if (carry_.step != action.step)
      fail<StorageError>("restoring y_", action.step, " from slot ", action.slot,
                         " gave the carry of step ", carry_.step);
    ++state_.restores;
    progress_after(action.slot, index + 1);
  }

  void free(const Action& action) {
    const int units = stages_.head(action.slot) ? stages_.units : 1;
    for (int i = 0; i < units; ++i) {
      store_->free(action.slot + i);
      journal_.release(action.slot + i);
    }
    stages_.head(action.slot) = false;
  }

  // A step that keeps its stage values in `action.slot` … + units − 1. In memory they go
  // straight into their slots (streamed out of the step, or built there:
  // ExplicitRungeKutta::step_keeping_stages), with no copy by the store.
  void store_stages(const Action& action, Index index) {
    if constexpr (StageKeepingStepper<Stepper>) {
      if (action.step != carry_.step || action.step >= state_.steps)
        fail<InvalidArgument>("schedule stores the stages of step ", action.step,
                              " but the state is y_", carry_.step);
      enter(carry_.step >= state_.reached ? Work::forward : Work::recompute);
      const Carry at = carry_;
      MemorySnapshotStore<B, Carry>* const in_place = store_.in_place;
      const std::span<Vector> into =
          in_place ? in_place->free_slots_for_writing(action.slot, stages_.units, at.step)
                   : std::span<Vector>(stages_.vectors);
      if (carry_.step == state_.steps - 1)
        last_step_keeping_stages(into);
      else
        step_keeping_stages(into);
      ++state_.advances;
      for (int i = 0; i < stages_.units; ++i) {
        if (in_place)
          in_place->stored_in_place(action.slot + i, at.step, at);
        else
          store_->store(action.slot + i, at.step, into[static_cast<std::size_t>(i)], at);
        journal_.hold(action.slot + i, at.step);
      }
      stages_.head(action.slot) = true;
      progress_after(action.slot, index + 1);
    }
  }

  void step_keeping_stages(std::span<Vector> into) requires StageKeepingStepper<Stepper> {
    stepper_.step_keeping_stages(y_, carry_, theta_, into);
    after_step(y_, carry_);
  }

  // The last step: y_l closes the run; the state kept is y_{l−1}, which nothing reads.
  void last_step_keeping_stages(std::span<Vector> into) requires StageKeepingStepper<Stepper> {
    Carry last = carry_;
    B::copy(y_, y_final_);
    stepper_.step_keeping_stages(y_final_, last, theta_, into);
    if (options_.check_finite) require_finite_state<B>(y_final_, last);
    notify(options_.observer, last.step > state_.reached ? StepKind::forward : StepKind::recompute,
           last.step, last.t);
    if (!state_.terminal_done) close_run(last);
    state_.reached = state_.steps;
  }

  // y_l is in y_final_ (the ordinary step from y_{l−1} = y_, carry `last`): the terminal cost,
  // λ = ∂J/∂y_l, and where the run ended.
  void close_run(Carry last) {
    const RunClose closed =
        adjoint_.close(y_, carry_, theta_, y_final_, last, grad_, lambda_, state_.loss);
    state_.final_t = closed.t_final;
    state_.final_change = closed.final_change;
    state_.terminal_done = true;
  }

  void reverse(const Action& action) {
    if (action.step != carry_.step || action.step != state_.adjoint_at - 1)
      fail<InvalidArgument>("schedule reverses step ", action.step, " with the state at step ",
                            carry_.step, " and the adjoint at step ", state_.adjoint_at);
    if (!state_.terminal_done) {
      // y_l from y_{l−1}, once, at the first reverse (a revolve schedule never advances to it):
      // the forward run's last step, counted and timed as forward work.
      enter(Work::forward);
      Carry last = carry_;
      B::copy(y_, y_final_);
      stepper_.step(y_final_, last, theta_);
      if (options_.check_finite) require_finite_state<B>(y_final_, last);
      notify(options_.observer,
             last.step > state_.reached ? StepKind::forward : StepKind::recompute, last.step,
             last.t);
      close_run(last);
      enter(Work::reverse);
    }
    adjoint_.reverse(y_, carry_, theta_, action.step == state_.steps - 1, y_final_, state_.final_t,
                     lambda_, mu_, grad_, watch_);
    --state_.adjoint_at;
    ++state_.reverses;
  }

  // The reverse of a step from its kept stage values, re-running nothing.
  void reverse_from_stages(const Action& action) {
    if constexpr (StageKeepingStepper<Stepper>) {
      if (action.step != state_.adjoint_at - 1 || !state_.terminal_done ||
          !stages_.head(action.slot))
        fail<InvalidArgument>("schedule reverses step ", action.step, " from the stages in slot ",
                              action.slot, " with the adjoint at step ", state_.adjoint_at);
      Carry at;
      std::span<const Vector> from;
      if (store_.in_place) {
        from = store_.in_place->held_slots(action.slot, stages_.units, action.step, at);
      } else {
        for (int i = 0; i < stages_.units; ++i)
          store_->restore(action.slot + i, action.step,
                          stages_.vectors[static_cast<std::size_t>(i)], at);
        from = stages_.vectors;
      }
      if (at.step != action.step)
        fail<StorageError>("the stages of step ", action.step, " in slot ", action.slot,
                           " carry step ", at.step);
      adjoint_.reverse_from_stages(from, at, theta_, lambda_, mu_, grad_, watch_);
      --state_.adjoint_at;
      ++state_.reverses;
      ++state_.stage_reverses;
    }
  }

  // The schedule has ended: every step reversed, the store's writes done, the result filled.
  CheckpointedResult<Vector> finish() {
    if (state_.reverses != state_.steps || state_.adjoint_at != 0)
      fail<InvalidArgument>("schedule '", schedule_.name(), "' ended after reversing ",
                            state_.reverses, " of ", state_.steps, " steps");
    store_->finish();    // every background write done; a failed one is an error even now
    store_->complete();  // a resumable run's file may go now
    fill_summary(result_.summary);
    result_.loss = state_.loss;
    result_.grad_y0 = std::move(lambda_);
    result_.grad_theta = std::move(mu_);
    result_.y_final = std::move(y_final_);
    result_.drift = drift_.report();
    return std::move(result_);
  }

  void fill_summary(Summary& summary) const {
    const auto& total = stepper_.counters();
    const SweepState& s = state_;
    SweepCounts counts;
    counts.steps = s.steps;
    counts.rejected_steps = total.rejected_attempts;
    // l + p (see summary.hpp); a reverse from stages re-runs no step.
    counts.forward_steps = s.advances + s.reverses - s.stage_reverses;
    counts.recomputed_steps = s.advances - s.stage_reverses;  // p: beyond the l each step needs
    counts.reversed_steps = s.reverses;
    // Inside adjoint steps (their stage rebuilds) as the store-all driver counts them; the rest
    // (first sweep, recomputation, the terminal step) is forward.
    counts.rhs_evaluations_reverse = clock_.rhs_evaluations(Work::reverse);
    counts.rhs_evaluations_forward =
        total.rhs_evaluations - counted_.rhs_evaluations - counts.rhs_evaluations_reverse;
    counts.vjp_evaluations = total.vjp_evaluations;
    counts.stores = s.stores;
    counts.restores = s.restores;
    counts.t_final = s.final_t;
    finish_summary<B>(summary, describe_method(stepper_), schedule_.name(), n_,
                      stepper_.parameter_size(), counts);
    summary.storage = store_->statistics();
    summary.forward_seconds = clock_.seconds(Work::forward);
    summary.recompute_seconds = clock_.seconds(Work::recompute);
    summary.reverse_seconds = clock_.seconds(Work::reverse);
    if (options_.assess_health)
      summary.health =
          assess_gradient<B>(s.loss, y0_, theta_, lambda_, mu_, s.final_change, s.steps);
  }

  Stepper& stepper_;
  const Objective<B>& objective_;
  const CheckpointOptions& options_;
  RunEnd<Stepper>& run_end_;
  const Vector& y0_;
  const Vector& theta_;
  Schedule& schedule_;
  const CheckpointPlan* plan_;
  OnlineSchedule* online_;
  bool online_on_disk_;
  AdjointSteps<Stepper> adjoint_;
  CheckpointedResult<Vector> result_;
  SweepState state_;
  DriftMonitor<B> drift_;
  SweepStore<B> store_;
  Index n_;
  Vector y_, grad_, lambda_, mu_;
  // λ and μ checked for NaN/Inf at their cadences (parameter_gradient_watch.hpp).
  ParameterGradientWatch<B, Stepper> watch_;
  Vector y_final_;  // y_l, formed at the first reverse (or by the online probe)
  StageSnapshots<Vector> stages_;
  ResumeJournal<B> journal_;
  // The stepper's counters when the sweep began (after a counting sweep, if any).
  std::remove_cvref_t<decltype(std::declval<const Stepper&>().counters())> counted_{};
  Carry carry_{}, probe_carry_{};
  bool probed_ = false;
  SweepClock clock_;
};

}  // namespace rwd::detail
