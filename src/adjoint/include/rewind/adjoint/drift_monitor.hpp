// rewind/adjoint/drift_monitor.hpp — proof that replays from snapshots reproduce the first
// forward sweep.
//
// During the first sweep the monitor keeps a compact fingerprint of sampled states: a 64-bit
// hash of the state's bytes (exact equality) and K = 4 projections ⟨r_j, y⟩ onto pseudo-random
// vectors r_j ∈ [−1, 1]^n generated from (seed, j, i) on the fly (no O(n) storage). Both come
// from one pass of the backend's own reduction (sum_index), so a state on a GPU is fingerprinted
// on the GPU: nothing is copied to the host. When a replay reaches a sampled step again, its
// fingerprint is compared: equal hashes mean a bitwise-identical replay; otherwise the relative
// drift is estimated from the projections, ‖P(y_replay) − P(y_first)‖ / ‖P(y_first)‖ ≈ ‖Δy‖/‖y‖
// (projections are linear, so they measure the difference itself).
//
// The hash: each element's bits, mixed with its index (one multiply), give a 64-bit value whose
// four 16-bit pieces are summed in four lanes. The lanes are sums of integers below 2^16 held in
// doubles, exact for fewer than 2^37 elements, so they do not depend on the order the backend adds
// them in (threads, blocks, ranks); the hash is the four lane sums combined. A changed element
// changes its mixed value to an unrelated one: a replay that differs anywhere goes unnoticed with
// probability about 2^-64.
//
// Memory is O(max_fingerprints), independent of the horizon: with l steps the monitor samples
// every ⌈l / max_fingerprints⌉-th step (every step when l ≤ max_fingerprints). When l is not
// known (steps < 0: an online run), it starts with every step and doubles its stride, dropping
// every other fingerprint, each time the first sweep outgrows the budget; replays come after the
// first sweep there, so they are compared against the final stride.
//
// Policy: ignore (record only), warn (one rwd::warn at the first drift — by default a line on
// stderr, see rewind/warning.hpp — and in the report), fail (throw rwd::DriftError at the first
// drift, naming the step).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/parallel.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"
#include "rewind/warning.hpp"

namespace rwd {

class DriftError : public Error {
 public:
  using Error::Error;
};

enum class DriftPolicy { ignore, warn, fail };

struct DriftReport {
  double max_rel_drift = 0.0;        // largest relative drift seen (0 when every replay matched)
  Index first_drift_step = -1;       // smallest step whose replayed state differed, −1 if none
  Index replayed_steps_checked = 0;  // replayed states compared with the first sweep
  Index mismatched_steps = 0;        // of those, how many were not bitwise identical
  Index sampling_stride = 1;         // every stride-th step is fingerprinted
  bool bitwise_identical() const { return mismatched_steps == 0; }
};

namespace detail {

// SplitMix64's finaliser of seed ^ (i · golden ratio): well-mixed 64 bits per index.
REWIND_HOST_DEVICE inline std::uint64_t drift_mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t x = seed ^ (i * 0x9E3779B97F4A7C15ULL);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// One element's share of a fingerprint: v[0..3] the projection terms r_j(i)·y_i, four weights in
// [−1, 1] from one hash of (seed, i), 16 bits each (one hash per element instead of one per
// weight keeps a fingerprint near the cost of one vector pass; 16-bit weights are plenty for
// sizing a difference); v[4..7] the 16-bit pieces of the element's bits mixed with that hash,
// exact integers whose sums are the hash lanes. Usable on host and device.
struct FingerprintKernel {
  static constexpr Index kMaxExactElements = Index{1} << 37;  // 2^37 · 2^16 ≤ 2^53

  const double* y;
  std::uint64_t seed;
  REWIND_HOST_DEVICE Sums<8> operator()(Index i) const {
    const std::uint64_t weights = drift_mix(seed, static_cast<std::uint64_t>(i));
    const double value = y[i];
    // The bits times an odd multiplier of this index's own: a bijection of the bits, so a changed
    // element always changes its pieces; distinct multipliers keep changes in several elements
    // from cancelling. One multiply rather than a second SplitMix: on the CPU the hash, not the
    // memory, sets a fingerprint's cost (gradient_cost_bench DriftFingerprint/*).
    const std::uint64_t hashed = (double_bits(value) ^ weights) * (weights | 1);
    Sums<8> s;
    for (int j = 0; j < 4; ++j) {
      s.v[j] =
          (static_cast<double>((weights >> (16 * j)) & 0xFFFFULL) * (2.0 / 65535.0) - 1.0) * value;
      s.v[4 + j] = static_cast<double>((hashed >> (16 * j)) & 0xFFFFULL);
    }
    return s;
  }
};

// The fingerprint on a host backend (rwd::RangeSumBackend: Eigen, a split state): the sums
// FingerprintKernel gives through sum_index, bit for bit, in a form that vectorises, one of
// sum_index's pieces at a time (B::sum_index_ranges). sum_index adds each element's eight values
// into eight running sums, one element after the other, so every element waits on the additions
// before it, and the 64-bit hash runs one element at a time beside them. Here a chunk of elements
// first gets its four projection terms and its hash pieces in a loop with no dependence between
// elements (vectorised, AVX-512 or AVX2 where the CPU has it: REWIND_SIMD_CLONES_AVX512); then the
// projection terms are added in element order, as sum_index adds them (the same bits); the hash
// pieces are added as integers, which is exact in any order, as their sums in doubles are (below
// 2^53).
inline constexpr Index kFingerprintChunk = 256;

REWIND_SIMD_CLONES_AVX512 inline void fingerprint_chunk(
    const double* __restrict y, std::uint64_t seed, Index begin, Index end,
    double (*__restrict terms)[kFingerprintChunk], std::uint64_t* __restrict pieces) {
  std::uint64_t p0 = 0, p1 = 0, p2 = 0, p3 = 0;
  for (Index i = begin; i < end; ++i) {
    const std::uint64_t weights = drift_mix(seed, static_cast<std::uint64_t>(i));
    const double value = y[i];
    const std::uint64_t hashed = (double_bits(value) ^ weights) * (weights | 1);
    for (int j = 0; j < 4; ++j) {
      // The 16-bit weight as a double, exactly, as (2^52 + w) − 2^52: integer instructions and
      // one subtraction, which vectorise where a conversion of 64-bit integers does not.
      const std::uint64_t w = (weights >> (16 * j)) & 0xFFFFULL;
      const double weight = std::bit_cast<double>(0x4330000000000000ULL | w) - 4503599627370496.0;
      terms[j][i - begin] = (weight * (2.0 / 65535.0) - 1.0) * value;
    }
    p0 += hashed & 0xFFFFULL;
    p1 += (hashed >> 16) & 0xFFFFULL;
    p2 += (hashed >> 32) & 0xFFFFULL;
    p3 += hashed >> 48;
  }
  pieces[0] += p0;
  pieces[1] += p1;
  pieces[2] += p2;
  pieces[3] += p3;
}

// Elements [begin, end) summed from zero, as sum_index sums one of its pieces.
inline Sums<8> fingerprint_range(const double* y, std::uint64_t seed, Index begin, Index end) {
  alignas(64) double terms[4][kFingerprintChunk];
  std::uint64_t pieces[4] = {0, 0, 0, 0};
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (Index chunk = begin; chunk < end; chunk += kFingerprintChunk) {
    const Index chunk_end = std::min(end, chunk + kFingerprintChunk);
    fingerprint_chunk(y, seed, chunk, chunk_end, terms, pieces);
    for (Index k = 0; k < chunk_end - chunk; ++k) {  // four chains, each in element order
      s0 += terms[0][k];
      s1 += terms[1][k];
      s2 += terms[2][k];
      s3 += terms[3][k];
    }
  }
  Sums<8> s;
  s.v[0] = s0;
  s.v[1] = s1;
  s.v[2] = s2;
  s.v[3] = s3;
  for (int j = 0; j < 4; ++j) s.v[4 + j] = static_cast<double>(pieces[j]);
  return s;
}

}  // namespace detail

template <class B>
class DriftMonitor {
 public:
  using Vector = typename B::Vector;

  DriftMonitor(Index steps, Index state_size, DriftPolicy policy, Index max_fingerprints,
               std::uint64_t seed = 0x5EEDF00DULL)
      : policy_(policy), seed_(seed) {
    // state_size: the values this process holds (rwd::host_size; a rank's own on a backend
    // split across processes); the hash lanes are exact below FingerprintKernel's limit.
    if (state_size >= detail::FingerprintKernel::kMaxExactElements)
      detail::fail<InvalidArgument>(
          "the drift monitor fingerprints states of fewer than 2^37 "
          "values; this one has ",
          state_size);
    if (max_fingerprints < 1)
      detail::fail<InvalidArgument>("max_fingerprints = ", max_fingerprints, " must be >= 1");
    if (steps < 0) {
      growing_ = true;
      report_.sampling_stride = 1;
      fingerprints_.resize(static_cast<std::size_t>(max_fingerprints) + 1);
      return;
    }
    report_.sampling_stride = std::max<Index>(1, (steps + max_fingerprints) / max_fingerprints);
    fingerprints_.resize(static_cast<std::size_t>(steps / report_.sampling_stride + 1));
  }

  bool samples(Index step) const { return step % report_.sampling_stride == 0; }

  // First forward sweep reached `step` with state y.
  void record(Index step, const Vector& y) {
    if (growing_)
      while (slot(step) >= fingerprints_.size()) thin();
    if (!samples(step)) return;
    fingerprints_[slot(step)] = fingerprint(y);
  }

  // A replay reached `step` with state y: compare with the first sweep.
  void check(Index step, double t, const Vector& y) {
    if (!samples(step)) return;
    const Fingerprint& first = fingerprints_[slot(step)];
    const Fingerprint now = fingerprint(y);
    ++report_.replayed_steps_checked;
    // Across processes the verdict is every rank's: one rank's mismatch stops all of them here,
    // with the same step and the same (global) projections in the message.
    if (!true_on_any_process<B>(now.hash != first.hash)) return;
    double diff = 0.0, norm = 0.0;
    for (int j = 0; j < 4; ++j) {
      diff += (now.proj[j] - first.proj[j]) * (now.proj[j] - first.proj[j]);
      norm += first.proj[j] * first.proj[j];
    }
    // Bytes differ but the projections agree exactly: report the smallest resolvable drift.
    const double rel = diff > 0.0 ? std::sqrt(diff / std::max(norm, 1e-300))
                                  : std::numeric_limits<double>::epsilon();
    ++report_.mismatched_steps;
    report_.max_rel_drift = std::max(report_.max_rel_drift, rel);
    const bool first_seen = report_.first_drift_step < 0;
    if (first_seen || step < report_.first_drift_step) report_.first_drift_step = step;
    if (policy_ == DriftPolicy::fail)
      detail::fail<DriftError>(
          "replayed state at step ", step, " (t = ", t,
          ") differs from the first forward sweep (relative drift ", rel,
          "): the right-hand side or backend is not deterministic, or a replay drew its ",
          "noise with another key (Carry::noise_seed)");
    if (policy_ == DriftPolicy::warn && first_seen)
      warn("drift monitor", "replayed state at step ", step, " (t = ", t,
           ") differs from the first forward sweep (relative drift ", rel,
           "); the gradient is that of slightly different trajectories");
  }

  const DriftReport& report() const { return report_; }

  // Resumed runs: the fingerprints of the first sweep and the report so far, as bytes a later
  // process hands to load() so that its replays are checked against the sweep of the process
  // that was killed; saved_bytes() bounds save().
  std::size_t saved_bytes() const {
    return sizeof(DriftReport) + 2 * sizeof(std::uint64_t) +
           fingerprints_.size() * sizeof(Fingerprint);
  }
  // Only the fingerprints of steps up to `reached` (the first sweep's furthest) are written.
  void save(std::vector<std::byte>& out, Index reached) const {
    const std::uint64_t count =
        std::min<std::uint64_t>(fingerprints_.size(), slot(std::max<Index>(reached, 0)) + 1);
    const std::size_t at = out.size();
    out.resize(at + sizeof report_ + sizeof kScheme + sizeof count + count * sizeof(Fingerprint));
    std::byte* p = out.data() + at;
    std::memcpy(p, &report_, sizeof report_);
    p += sizeof report_;
    std::memcpy(p, &kScheme, sizeof kScheme);
    std::memcpy(p + sizeof kScheme, &count, sizeof count);
    std::memcpy(p + sizeof kScheme + sizeof count, fingerprints_.data(),
                count * sizeof(Fingerprint));
  }
  // Takes the state save() wrote (of a monitor of the same length, or of unknown length too,
  // and the same fingerprint scheme); false if it does not fit. A monitor of unknown length takes
  // the stride it had reached with its fingerprints.
  bool load(std::span<const std::byte> in) {
    constexpr std::size_t header = sizeof(DriftReport) + 2 * sizeof(std::uint64_t);
    if (in.size() < header) return false;
    std::uint64_t scheme = 0, count = 0;
    DriftReport report;
    std::memcpy(&report, in.data(), sizeof report);
    std::memcpy(&scheme, in.data() + sizeof report, sizeof scheme);
    std::memcpy(&count, in.data() + sizeof report + sizeof scheme, sizeof count);
    const bool stride_fits =
        growing_ ? report.sampling_stride >= 1 : report.sampling_stride == report_.sampling_stride;
    if (scheme != kScheme || count > fingerprints_.size() ||
        in.size() != header + count * sizeof(Fingerprint) || !stride_fits)
      return false;
    report_ = report;
    std::memcpy(fingerprints_.data(), in.data() + header, count * sizeof(Fingerprint));
    return true;
  }

 private:
  // Which hash a saved fingerprint holds: 2, the lane sums of FingerprintKernel (1, a host-side
  // hash of the state's bytes, was written without this tag). Fingerprints of another scheme
  // cannot be compared, so load() refuses them.
  static constexpr std::uint64_t kScheme = 2;

  struct Fingerprint {
    std::uint64_t hash = 0;
    double proj[4] = {0, 0, 0, 0};
  };

  // Doubles the stride: slot i now holds the step of old slot 2i.
  void thin() {
    for (std::size_t i = 0; 2 * i < fingerprints_.size(); ++i)
      fingerprints_[i] = fingerprints_[2 * i];
    report_.sampling_stride *= 2;
  }

  std::size_t slot(Index step) const {
    return static_cast<std::size_t>(step / report_.sampling_stride);
  }

  Fingerprint fingerprint(const Vector& y) {
    Sums<8> p;
    if constexpr (RangeSumBackend<B>) {
      // On the host (Eigen, a split state): sum_index's sums, each of its pieces vectorised.
      p = B::template sum_index_ranges<8>(B::size(y), [&](Index begin, Index end) {
        return detail::fingerprint_range(B::data(y), seed_, begin, end);
      });
    } else {
      p = B::template sum_index<8>(B::size(y), detail::FingerprintKernel{B::data(y), seed_});
    }
    Fingerprint f;
    for (int j = 0; j < 4; ++j) f.proj[j] = p[j];
    // The four exact lane sums, as integers, folded with FNV-1a.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (int j = 4; j < 8; ++j) h = (h ^ static_cast<std::uint64_t>(p[j])) * 0x100000001b3ULL;
    f.hash = h;
    return f;
  }

  DriftPolicy policy_;
  std::uint64_t seed_;
  std::vector<Fingerprint> fingerprints_;
  bool growing_ = false;  // the number of steps is unknown: thin() as the run grows
  DriftReport report_;
};

}  // namespace rwd
