// rewind/adjoint/measure_costs.hpp — what a checkpointing plan weighs, measured against the
// stepper that will run: seconds of one forward step and of one reversed step (an implicit
// method's Newton iterations and factorisations included, at the rate its run does them), of a
// snapshot's write and read on the disk, and of a snapshot copy into and out of the device and
// host levels; and the same as a CostModel in forward steps, the unit the schedules plan in.
//
//   rwd::CostProbe probe;
//   probe.disk_directory = "/scratch";        // the disk level's directory (empty: no disk)
//   probe.levels = true;                      // the device and host levels' copies
//   probe.adjoint = true;                     // a reversed step: the adjoint's cost factor
//   rwd::CostMeasurement m = rwd::measure_costs(stepper, y0, theta, probe);
//   rwd::CostModel costs = m.in_forward_steps();   // step_time 1; disk, device, host copies;
//                                                  // adjoint_cost_factor measured
//   auto plan = rwd::plan_checkpoints(rwd::PlanRequest::three_level(4, 64, 1000, costs), l);
//
// The step is timed on a copy of y0 (the stepper's own state is what initial_carry makes of it);
// the copies through the stores a run uses (rwd::measure_level_costs, rwd::measure_disk_costs).
// Every figure is a median of a few samples, so one slow sample does not decide a plan.
//
// Across processes (a backend whose state is split over MPI ranks) every call here is a
// collective: each rank takes as many steps as the others, and every figure returned is the
// slowest rank's (rwd::max_on_any_process), so every rank plans the same schedule from them.
// Sizes are those of the rank that holds the most values: a snapshot is one rank's slice.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/snapshot_level_probe.hpp"
#include "rewind/types.hpp"

namespace rwd {

namespace detail {
// Median seconds of one `call()` over 5 batches, each at least 20 ms (or 100 000 calls); the
// slowest rank's, at least 1e-9. Across ranks a call is a collective (a step): every rank makes
// as many as the others, since the batch ends on the slowest rank's clock.
template <VectorBackend B, class Call>
double median_batch_seconds(Call&& call) {
  std::vector<double> samples;
  for (int batch = 0; batch < 5; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    Index taken = 0;
    double elapsed = 0.0;
    do {
      call();
      ++taken;
      elapsed = max_on_any_process<B>(seconds_since(start));
    } while (elapsed < 0.02 && taken < 100000);
    samples.push_back(elapsed / static_cast<double>(taken));
  }
  std::nth_element(samples.begin(), samples.begin() + 2, samples.end());
  return max_on_any_process<B>(std::max(samples[2], 1e-9));
}
}  // namespace detail

// Seconds of one forward step of `stepper` from y0 with θ: the median of 5 batches of steps,
// each at least 20 ms (or 100 000 steps); a run that ends within a batch starts over from y0.
// At least 1e-9. Takes steps with `stepper` (its counters and carry move on): a caller that
// needs the stepper untouched times a copy. Across processes, the slowest rank's time.
template <TimeStepper Stepper>
double measure_step_seconds(Stepper& stepper, const typename Stepper::Backend::Vector& y0,
                            const typename Stepper::Backend::Vector& theta) {
  using B = typename Stepper::Backend;
  using V = typename B::Vector;
  V y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  return detail::median_batch_seconds<B>([&] {
    if (stepper.finished(carry)) {  // short runs: start over
      y = y0;
      carry = stepper.initial_carry(y, theta);
    }
    stepper.step(y, carry, theta);
  });
}

// Seconds of one step and of one reversed step, measured on the same steps
// (measure_adjoint_step_seconds).
struct AdjointStepSeconds {
  double step_seconds = 0.0;          // one step from each start
  double adjoint_step_seconds = 0.0;  // adjoint_step from each start: the step re-run, reversed

  // CostModel::adjoint_cost_factor: a reversed step less the step it re-runs, in steps; at
  // least 0 (timing noise can put a cheap adjoint under its step).
  double adjoint_cost_factor() const {
    return std::max(0.0, adjoint_step_seconds / step_seconds - 1.0);
  }
};

namespace detail {
// Median seconds of `one(k)` for k = count − 1, …, 0 and round again (`restart()` before each
// round), as median_batch_seconds.
template <VectorBackend B, class One, class Restart>
double median_seconds_over_starts(std::size_t count, One&& one, Restart&& restart) {
  std::size_t next = 0;
  return median_batch_seconds<B>([&] {
    if (next == 0) {
      next = count;
      restart();
    }
    one(--next);
  });
}
}  // namespace detail

// A step and a reversed step of `stepper`, timed from the same starts: the states and carries of
// the first steps of a run from y0 (up to 64 and up to 64 MiB of states, fewer if the run ends
// first). First a step from each start in turn (its state copied from the start: the copy is in the
// figure), then `between_parts(stepper)`, then adjoint_step from each — the step re-run, then
// reversed — with λ from y_K, the state those steps reach (a cotangent of the state's scale),
// restarted at every round so that a growing adjoint never overflows, and μ accumulating. The
// counters are reset before each part, so between_parts sees the steps' work and, after the call,
// they hold the reversed steps' (an implicit method's Newton iterations and factorisations, say).
// The same steps for both, so that a run's transient (where an implicit method's Newton iterations
// are most) weighs on each alike. Throws InvalidArgument when the run from y0 takes no step. Across
// processes, the slowest rank's times (every rank takes as many steps).
template <TimeStepper Stepper, class BetweenParts = void (*)(Stepper&)>
AdjointStepSeconds measure_adjoint_step_seconds(
    Stepper& stepper, const typename Stepper::Backend::Vector& y0,
    const typename Stepper::Backend::Vector& theta,
    BetweenParts&& between_parts = [](Stepper&) {}) {
  using B = typename Stepper::Backend;
  using V = typename B::Vector;
  // At most 64 starts, and at most 64 MiB of them (at least one): a large state keeps fewer.
  const Index state_bytes = std::max<Index>(host_size<B>(y0), 1) * Index{sizeof(double)};
  const auto kept =
      static_cast<std::size_t>(std::clamp<Index>((Index{64} << 20) / state_bytes, 1, 64));
  std::vector<V> starts;
  std::vector<Carry> carries;
  V y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  while (starts.size() < kept && !stepper.finished(carry)) {
    starts.push_back(y);
    carries.push_back(carry);
    stepper.step(y, carry, theta);
  }
  if (starts.empty())
    detail::fail<InvalidArgument>("measure_adjoint_step_seconds: the run from y0 takes no step");
  const V lambda_start = y;  // y_K
  AdjointStepSeconds seconds;
  stepper.reset_counters();
  seconds.step_seconds = detail::median_seconds_over_starts<B>(
      starts.size(),
      [&](std::size_t k) {
        B::copy(starts[k], y);
        carry = carries[k];
        stepper.step(y, carry, theta);
      },
      [] {});
  between_parts(stepper);
  stepper.reset_counters();
  V lambda = lambda_start;
  V mu = theta;
  B::fill(mu, 0.0);
  seconds.adjoint_step_seconds = detail::median_seconds_over_starts<B>(
      starts.size(),
      [&](std::size_t k) { stepper.adjoint_step(starts[k], carries[k], theta, lambda, mu); },
      [&] { B::copy(lambda_start, lambda); });
  return seconds;
}

// Values of y a snapshot holds: all of them, or on a backend split across processes the most
// any rank holds (each rank stores its own slice).
template <VectorBackend B>
Index snapshot_values(const typename B::Vector& y) {
  return static_cast<Index>(max_on_any_process<B>(static_cast<double>(host_size<B>(y))));
}

// Bytes of one snapshot of y in a memory budget: its values (snapshot_values) and the carry the
// drivers keep beside them (kCarryBytes). A budget of B bytes holds
// rwd::snapshots_in_memory(B, snapshot_bytes<B>(y)) snapshots.
template <VectorBackend B>
Index snapshot_bytes(const typename B::Vector& y) {
  return snapshot_values<B>(y) * static_cast<Index>(sizeof(double)) + kCarryBytes;
}

// What measure_costs measures besides the step.
struct CostProbe {
  // A snapshot's write and read in this directory (rwd::measure_disk_costs: a scratch file,
  // removed); empty: no disk level.
  std::filesystem::path disk_directory;
  // A snapshot copy into and out of the device level (the memory store) and the host level
  // (rwd::measure_level_costs).
  bool levels = false;
  int level_samples = 5;  // copies timed on each level (the median is kept)
  // Device slots the copies go round (level_probe_slots: as many as the run keeps, so that the
  // copies meet the caches as the run's do; 1 times a copy that stays in the CPU's cache).
  int level_slots = 1;
  // A reversed step (rwd::measure_adjoint_step_seconds), for CostModel::adjoint_cost_factor.
  bool adjoint = false;

  // Throws InvalidArgument naming the field: level_samples and level_slots >= 1.
  void validate() const {
    if (level_samples < 1)
      detail::fail<InvalidArgument>("CostProbe: level_samples = ", level_samples, " must be >= 1");
    if (level_slots < 1)
      detail::fail<InvalidArgument>("CostProbe: level_slots = ", level_slots, " must be >= 1");
  }
};

// Device slots for CostProbe::level_slots when a run keeps up to `budget` snapshots of
// `state_bytes` bytes (values only): as many as it keeps, at most 64 MiB of them (more than the
// caches hold) and at most 2^20; at least 1.
inline int level_probe_slots(Index state_bytes, Index budget) {
  const Index slots = std::clamp<Index>((Index{64} << 20) / std::max<Index>(state_bytes, 1), 1,
                                        std::max<Index>(budget, 1));
  return static_cast<int>(std::min<Index>(slots, 1 << 20));
}

// Measured seconds (the slowest rank's across processes); a level not probed is absent.
struct CostMeasurement {
  double step_seconds = 0.0;  // one forward step (measure_step_seconds)
  // A step and a reversed step on the same steps (measure_adjoint_step_seconds).
  std::optional<AdjointStepSeconds> adjoint;
  std::optional<DiskCosts> disk;     // one snapshot write and read on the disk
  std::optional<LevelCosts> levels;  // one snapshot copy into and out of the device and host levels

  // `base` with the measured costs over one forward step's, the unit the schedules plan in:
  // step_time = 1; write_time/read_time and host_write_time/host_read_time from the levels,
  // disk_write_time/disk_read_time from the disk, adjoint_cost_factor from the reversed step
  // (AdjointStepSeconds::adjoint_cost_factor), where measured (the others as in `base`).
  // Throws InvalidArgument when step_seconds is not > 0 or a cost is not finite and >= 0.
  CostModel in_forward_steps(CostModel base = {}) const {
    if (!(step_seconds > 0.0))
      detail::fail<InvalidArgument>("CostMeasurement: step_seconds = ", step_seconds,
                                    " must be > 0");
    base.step_time = 1.0;
    if (levels) {
      base.write_time = levels->device_write_seconds / step_seconds;
      base.read_time = levels->device_read_seconds / step_seconds;
      base.host_write_time = levels->host_write_seconds / step_seconds;
      base.host_read_time = levels->host_read_seconds / step_seconds;
    }
    if (disk) {
      base.disk_write_time = disk->write_seconds / step_seconds;
      base.disk_read_time = disk->read_seconds / step_seconds;
    }
    if (adjoint) base.adjoint_cost_factor = adjoint->adjoint_cost_factor();
    base.validate();
    return base;
  }
};

// One forward step of `stepper` from y0 with θ, then what `probe` asks for, in that order: a
// reversed step, the levels' copies and the disk's write and read, for snapshots of y0's size
// (snapshot_values) and the carry. Throws StorageError when the disk directory cannot take the
// scratch file. Takes steps with `stepper` (see measure_step_seconds).
template <TimeStepper Stepper>
CostMeasurement measure_costs(Stepper& stepper, const typename Stepper::Backend::Vector& y0,
                              const typename Stepper::Backend::Vector& theta,
                              const CostProbe& probe = {}) {
  using B = typename Stepper::Backend;
  probe.validate();
  CostMeasurement measured;
  measured.step_seconds = measure_step_seconds(stepper, y0, theta);
  if (probe.adjoint) measured.adjoint = measure_adjoint_step_seconds(stepper, y0, theta);
  const Index values = snapshot_values<B>(y0);
  if (probe.levels) {
    LevelCosts levels = measure_level_costs<B>(values, probe.level_samples, probe.level_slots);
    for (double* seconds : {&levels.device_write_seconds, &levels.device_read_seconds,
                            &levels.host_write_seconds, &levels.host_read_seconds})
      *seconds = max_on_any_process<B>(*seconds);
    measured.levels = levels;
  }
  if (!probe.disk_directory.empty()) {
    DiskCosts disk =
        measure_disk_costs(probe.disk_directory, values, static_cast<int>(kCarryBytes));
    disk.write_seconds = max_on_any_process<B>(disk.write_seconds);
    disk.read_seconds = max_on_any_process<B>(disk.read_seconds);
    measured.disk = disk;
  }
  return measured;
}

}  // namespace rwd
