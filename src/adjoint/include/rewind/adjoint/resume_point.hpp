// rewind/adjoint/resume_point.hpp — what a process continuing a killed checkpointed run needs:
// how far the action stream got, the sweep's state whole (rwd::SweepState: its counters and
// sums), which snapshot each live slot held, the adjoint so far, and the drift monitor's
// fingerprints. Written by
// rwd::CheckpointedAdjoint as the progress record of a resumable snapshot file
// (rewind/store/snapshot_store.hpp) and read back by the next process.
//
// The states themselves are not here: the state at `position` and any live snapshot that did not
// survive (a memory slot, a disk slot being rewritten when the process died) are recomputed
// from the nearest earlier snapshot that did, or from y_0, by the same deterministic steps —
// so the continued run is bit for bit the uninterrupted one, and the drift monitor checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/adjoint/sweep_state.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct ResumePoint {
  struct Held {
    std::int32_t slot = -1;
    std::int32_t stage_head = 0;  // 1: the first of the stage vectors of step `step`
    Index step = -1;
  };

  Index actions_done = 0;  // actions of the schedule already executed
  Index position = 0;      // the step of the current state
  SweepState sweep;        // the sweep's counters and sums, saved and restored whole
  std::vector<Held> held;
  std::vector<double> lambda, mu, y_final;  // empty before the terminal cost
  std::vector<std::byte> drift;             // DriftMonitor::save

  // An upper bound of encode()'s size for these sizes (the file reserves it up front).
  static std::int64_t capacity(int slots, Index state_values, Index parameter_values,
                               std::size_t drift_bytes) {
    return static_cast<std::int64_t>(
        kFixedBytes + 5 * sizeof(std::uint64_t) + static_cast<std::size_t>(slots) * sizeof(Held) +
        (2 * static_cast<std::size_t>(state_values) + static_cast<std::size_t>(parameter_values)) *
            sizeof(double) +
        drift_bytes);
  }

  std::vector<std::byte> encode() const {
    std::vector<std::byte> out;
    put(out, kMagic);
    const SweepState& s = sweep;
    for (Index v : {actions_done, position, s.reached, s.adjoint_at, s.steps, s.advances, s.stores,
                    s.restores, s.reverses, s.stage_reverses})
      put(out, v);
    put(out, std::int64_t{s.terminal_done ? 1 : 0});
    for (double v : {s.loss, s.final_t, s.final_change}) put(out, v);
    put_array(out, held);
    put_array(out, lambda);
    put_array(out, mu);
    put_array(out, y_final);
    put_array(out, drift);
    return out;
  }

  // Throws StorageError when the bytes are not a record this code wrote (they passed the file's
  // checksum, so only another version of rewind could have written them).
  static ResumePoint decode(std::span<const std::byte> in) {
    ResumePoint point;
    std::size_t at = 0;
    if (get<std::uint64_t>(in, at) != kMagic)
      detail::fail<StorageError>("the progress record was written by another version of rewind");
    SweepState& s = point.sweep;
    for (Index* v : {&point.actions_done, &point.position, &s.reached, &s.adjoint_at, &s.steps,
                     &s.advances, &s.stores, &s.restores, &s.reverses, &s.stage_reverses})
      *v = get<Index>(in, at);
    s.terminal_done = get<std::int64_t>(in, at) != 0;
    for (double* v : {&s.loss, &s.final_t, &s.final_change}) *v = get<double>(in, at);
    get_array(in, at, point.held);
    get_array(in, at, point.lambda);
    get_array(in, at, point.mu);
    get_array(in, at, point.y_final);
    get_array(in, at, point.drift);
    if (at != in.size()) detail::fail<StorageError>("the progress record has trailing bytes");
    return point;
  }

 private:
  static constexpr std::uint64_t kMagic = 0x3374696f70736572ULL;  // "resopit3"
  static constexpr std::size_t kFixedBytes = 15 * sizeof(std::uint64_t);

  template <class T>
  static void put(std::vector<std::byte>& out, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &value, sizeof(T));
  }
  template <class T>
  static void put_array(std::vector<std::byte>& out, const std::vector<T>& values) {
    put(out, static_cast<std::uint64_t>(values.size()));
    const std::size_t at = out.size();
    out.resize(at + values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(out.data() + at, values.data(), values.size() * sizeof(T));
  }
  template <class T>
  static T get(std::span<const std::byte> in, std::size_t& at) {
    if (in.size() - at < sizeof(T)) detail::fail<StorageError>("the progress record is truncated");
    T value;
    std::memcpy(&value, in.data() + at, sizeof(T));
    at += sizeof(T);
    return value;
  }
  template <class T>
  static void get_array(std::span<const std::byte> in, std::size_t& at, std::vector<T>& values) {
    const auto count = get<std::uint64_t>(in, at);
    if (count > (in.size() - at) / sizeof(T))
      detail::fail<StorageError>("the progress record is truncated");
    values.resize(static_cast<std::size_t>(count));
    if (count > 0) std::memcpy(values.data(), in.data() + at, count * sizeof(T));
    at += static_cast<std::size_t>(count) * sizeof(T);
  }
};

}  // namespace rwd
