// rewind/integrators/keyed_noise.hpp — standard normal draws that are a pure function of their
// key, so every replay from a snapshot regenerates them without storing them.
//
//   rwd::NoiseKey key{.seed = carry.noise_seed, .step = carry.step, .stage = 0,
//                     .purpose = rwd::NoisePurpose::brownian_increment};
//   rwd::fill_keyed_normals<B>(key, std::sqrt(h), dw);   // dw_i = √h ξ_i, ξ_i ~ N(0, 1)
//   double xi = rwd::keyed_normal(key, /*component=*/5);  // the same ξ_5 as in dw
//
// Generator: Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011), from Random123. A counter-based generator maps (key, counter) to 128
// random bits with no state in between, so the draw of component i at step n is computed
// directly, in any order, on any thread or GPU lane, and again in a replay. Here
//   key     = the 64-bit seed (two 32-bit words),
//   counter = (step low word, step high word, component block, stage << 16 | purpose),
// where a block holds two components: its 128 bits are two 64-bit uniforms, and one Box–Muller
// transform (Random123/boxmuller.hpp) turns them into the two normals of components 2b and 2b+1.
// The purpose tag keeps draws for different uses (the Brownian increment, a second independent
// sequence a later scheme may need) apart even at the same step and stage.
//
// Determinism: the uniform bits are the same on every platform; the normals are the same bits
// for any thread count, schedule and replay within one build. Box–Muller calls sincos, log and
// sqrt, which are not correctly rounded in every math library, so a normal computed by CUDA's
// libdevice may differ from glibc's in the last bit: compare CPU and GPU runs to round-off, not
// bitwise.
//
// Ranges: steps in [0, 2^63), stages and purposes below 2^16, components below 2^33 (the block
// index is one 32-bit word). fill_keyed_normals refuses a longer vector before drawing.
#pragma once

#include <concepts>
#include <cstdint>

#include <Random123/philox.h>
#include <Random123/boxmuller.hpp>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

namespace rwd {

// What a draw is for; part of the counter, so different uses never share a draw.
enum class NoisePurpose : std::uint32_t {
  brownian_increment = 0,  // ξ in ΔW = √h ξ
};

// The key of one sequence of draws: component i's normal is keyed_normal(key, i).
struct NoiseKey {
  std::uint64_t seed = 0;
  Index step = 0;
  std::uint32_t stage = 0;
  NoisePurpose purpose = NoisePurpose::brownian_increment;
};

// The largest component index (exclusive) a key can draw: 2^32 blocks of two.
inline constexpr Index kMaxNoiseComponents = Index{1} << 33;

namespace detail {

// The two normals of block b of a key (components 2b and 2b+1).
REWIND_HOST_DEVICE inline r123::double2 keyed_normal_pair(std::uint64_t seed, std::uint64_t step,
                                                          std::uint32_t stage_purpose,
                                                          std::uint32_t block) {
  using Philox = r123::Philox4x32;
  const Philox::ctr_type counter = {{static_cast<std::uint32_t>(step),
                                     static_cast<std::uint32_t>(step >> 32), block, stage_purpose}};
  const Philox::key_type key = {
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const Philox::ctr_type bits = Philox()(counter, key);
  const std::uint64_t u0 = (static_cast<std::uint64_t>(bits[1]) << 32) | bits[0];
  const std::uint64_t u1 = (static_cast<std::uint64_t>(bits[3]) << 32) | bits[2];
  return r123::boxmuller(u0, u1);
}

REWIND_HOST_DEVICE inline std::uint32_t stage_purpose_word(std::uint32_t stage,
                                                           NoisePurpose purpose) {
  return (stage << 16) | (static_cast<std::uint32_t>(purpose) & 0xFFFFu);
}

// out[2b], out[2b+1] = scale · (the two normals of block b); one Philox call per block. Each
// index b writes only its own two entries, so for_each_index may run blocks in any order.
struct KeyedNormalBlockKernel {
  double* out;
  Index n;
  std::uint64_t seed;
  std::uint64_t step;
  std::uint32_t stage_purpose;
  double scale;

  REWIND_HOST_DEVICE void operator()(Index b) const {
    const r123::double2 z =
        keyed_normal_pair(seed, step, stage_purpose, static_cast<std::uint32_t>(b));
    const Index i = 2 * b;
    out[i] = scale * z.x;
    if (i + 1 < n) out[i + 1] = scale * z.y;
  }
};

inline void require_noise_key(const NoiseKey& key, Index n) {
  if (key.step < 0) fail<InvalidArgument>("noise key step = ", key.step, " must be >= 0");
  if (key.stage > 0xFFFFu)
    fail<InvalidArgument>("noise key stage = ", key.stage, " must be < 65536");
  if (n > kMaxNoiseComponents)
    fail<InvalidArgument>("a noise vector of ", n, " components is longer than the ",
                          kMaxNoiseComponents, " a key can draw");
}

}  // namespace detail

// The standard normal ξ of one component under a key (host or device).
REWIND_HOST_DEVICE inline double keyed_normal(const NoiseKey& key, Index component) {
  const r123::double2 z =
      detail::keyed_normal_pair(key.seed, static_cast<std::uint64_t>(key.step),
                                detail::stage_purpose_word(key.stage, key.purpose),
                                static_cast<std::uint32_t>(component >> 1));
  return (component & 1) ? z.y : z.x;
}

// out_i = scale · keyed_normal(key, i) for every i, on the backend's device (Eigen: host threads
// through rewind/parallel.hpp; Thrust: a for_each over the block indices, which compiles for
// CUDA as well). The bits do not depend on the thread count or the order of the blocks. Does not
// allocate.
//
// A vector split across processes (a backend with B::global_index: rwd::DistributedBackend) keys
// each of this process's values by its index in the whole vector, so every rank count draws the
// one-process numbers; a rank's slice may start inside a Box–Muller pair, so there each value
// computes its own pair (twice the generator work, on the host).
template <VectorBackend B>
void fill_keyed_normals(const NoiseKey& key, double scale, typename B::Vector& out) {
  const Index n = B::size(out);
  detail::require_noise_key(key, n);
  if constexpr (requires(const typename B::Vector& v) {
                  { B::global_index(v, Index{0}) } -> std::convertible_to<Index>;
                }) {
    const typename B::Vector* whole = &out;
    double* values = B::data(out);
    B::for_each_index(
        n, [=](Index i) { values[i] = scale * keyed_normal(key, B::global_index(*whole, i)); });
    return;
  }
  B::for_each_index((n + 1) / 2,
                    detail::KeyedNormalBlockKernel{
                        B::data(out), n, key.seed, static_cast<std::uint64_t>(key.step),
                        detail::stage_purpose_word(key.stage, key.purpose), scale});
}

}  // namespace rwd
