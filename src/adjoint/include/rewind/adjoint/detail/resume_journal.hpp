// rewind/adjoint/detail/resume_journal.hpp — the journal of a resumable checkpointed sweep: which
// step each schedule slot holds, the progress record (rwd::ResumePoint, the sweep state saved
// whole) written behind the snapshots it relies on, the ranks' agreement on a stop request, and
// the identity a snapshot file must share with the run that continues it. Internal to
// rwd::CheckpointedAdjoint.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/sweep_state.hpp"
#include "rewind/backend/backend.hpp"
#include "rewind/format.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd::detail {

template <class B>
class ResumeJournal {
 public:
  using Vector = typename B::Vector;

  ResumeJournal(int slots, double interval_seconds, std::shared_ptr<const SnapshotRanks> ranks)
      : held_(static_cast<std::size_t>(std::max(slots, 0)), -1),
        interval_seconds_(interval_seconds),
        ranks_(std::move(ranks)) {}

  // The step slot `slot` holds (−1: free).
  Index held(int slot) const { return held_[static_cast<std::size_t>(slot)]; }
  void hold(int slot, Index step) { held_[static_cast<std::size_t>(slot)] = step; }
  void release(int slot) { held_[static_cast<std::size_t>(slot)] = -1; }
  int slots() const { return static_cast<int>(held_.size()); }

  // The progress record at an action boundary: `actions_done` actions executed, the current state
  // at `position`; λ, μ and y_l once the terminal cost is taken. `stage_head(slot)` says whether
  // a held slot begins a stage snapshot of `stage_units` slots.
  template <class StageHead>
  ResumePoint point(Index actions_done, Index position, const SweepState& state,
                    const StageHead& stage_head, int stage_units, const Vector& lambda,
                    const Vector& mu, const Vector& y_final, const DriftMonitor<B>& drift) const {
    ResumePoint point;
    point.actions_done = actions_done;
    point.position = position;
    point.sweep = state;
    for (int slot = 0; slot < slots(); ++slot) {
      const Index step = held(slot);
      if (step < 0) continue;
      const bool head = stage_units > 0 && stage_head(slot);
      point.held.push_back({slot, head ? 1 : 0, step});
      if (head) slot += stage_units - 1;  // the rest of its stage vectors
    }
    if (state.terminal_done) {
      point.lambda = to_host(lambda);
      point.mu = to_host(mu);
      point.y_final = to_host(y_final);
    }
    drift.save(point.drift, state.reached);
    return point;
  }

  void save(SnapshotStore<B, Carry>& store, const ResumePoint& point) {
    store.save_progress(point.encode());
    last_progress_ = std::chrono::steady_clock::now();
  }

  // Whether a record is due after a store into or a restore from `slot`: the slot persists and
  // the interval has passed (for a state split across ranks, when the ranks agree that it has:
  // SnapshotStore::progress_due).
  bool due(SnapshotStore<B, Carry>& store, int slot) const {
    return store.persists(slot) &&
           store.progress_due(seconds_since(last_progress_) >= interval_seconds_);
  }

  // The signal of a pending stop request (rwd::request_stop, a signal), −1 when none. For a state
  // split across ranks it is agreed (the lowest requesting rank's): a rank that stopped alone
  // would leave the others waiting in the next step's halo exchange. The ranks agree at every
  // kStopAgreementEvery-th step boundary (counted alike on every rank), so a stop waits at most
  // that many steps: one small all-gather each time (0.4 µs with 2 ranks, 7 µs with 4
  // oversubscribed ranks on a 2-core machine). Gray–Scott n = 24 with 2 and 4 ranks on that
  // machine showed no difference within its noise between every boundary and every 8th
  // (bench/results/resume.md); every 8th bounds the added collectives on a slower network.
  static constexpr Index kStopAgreementEvery = 8;
  int agreed_stop() {
    const int mine = rwd::stop_signal();
    if (!ranks_ || ranks_->size() <= 1) return mine;
    if (++stop_checks_ % kStopAgreementEvery != 0) return -1;
    const std::int64_t value = mine;
    for (const std::int64_t each : ranks_->all_gather(std::span(&value, 1)))
      if (each >= 0) return static_cast<int>(each);
    return -1;
  }

  // A stop was requested: a resumable run saves its progress (`save_point`) at this action
  // boundary and waits for its writes; then rwd::Interrupted says where it stopped.
  template <class SavePoint>
  [[noreturn]] static void stop_here(int signal, const Carry& carry, const SweepState& state,
                                     SnapshotStore<B, Carry>& store, const SavePoint& save_point) {
    std::ostringstream where;
    if (state.terminal_done)
      where << "in the reverse sweep (the adjoint at step " << state.adjoint_at << " of "
            << state.steps << ")";
    else
      where << "in the forward sweep (at step " << carry.step
            << (state.steps >= 0 ? " of " + std::to_string(state.steps) : "") << ")";
    if (store.resumable()) {
      // The writes before the record first: for a split state every rank then holds the record
      // before this one, whichever ranks a kill during the write below leaves without it.
      store.finish();
      save_point();
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

  // What a resumable snapshot file must agree on with the run continuing it: the caller's text,
  // then the sizes, y_0 and θ (hashed), the method, the plan and the drift monitor's budget.
  // `steps` < 0: a run of unknown length (the online schedule).
  static std::string identity(const std::string& caller, const Vector& y0, const Vector& theta,
                              const std::string& method, const std::string& schedule, Index steps,
                              int slots, Index max_fingerprints) {
    std::ostringstream out;
    out << caller;
    if (!caller.empty() && caller.back() != '\n') out << '\n';
    out << "state size = " << host_size<B>(y0) << "\nparameter size = " << host_size<B>(theta)
        << "\ny0 hash = " << std::hex << host_hash(y0) << "\ntheta hash = " << host_hash(theta)
        << std::dec << "\nmethod = " << method << "\nschedule = " << schedule
        << "\nsteps = " << (steps < 0 ? std::string("unknown") : std::to_string(steps))
        << "\nslots = " << slots << "\nfingerprints = " << max_fingerprints << '\n';
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

 private:
  std::vector<Index> held_;  // the step each schedule slot holds, −1 when free
  double interval_seconds_;
  std::shared_ptr<const SnapshotRanks> ranks_;
  Index stop_checks_ = 0;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
};

}  // namespace rwd::detail
