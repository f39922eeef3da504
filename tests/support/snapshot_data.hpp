// Snapshots for the store tests: states, carries and metadata that differ per step, whose every
// bit matters, and bit-for-bit comparisons of what a store gives back.
//
//   store.store(slot, 7, rwd::testing::snapshot_state(kSize, 7), rwd::testing::snapshot_carry(7));
//   rwd::testing::expect_snapshot(store, slot, 7, kSize);   // restored bits == those stored
//
//   file.write(slot, 7, rwd::testing::snapshot_values(kSize, 7), rwd::testing::snapshot_meta(kMeta,
//   7));
//
// Core only: a store is any type with restore(slot, step, y, carry) (expect_snapshot is a
// template), so the header needs none of the checkpoint parts.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "rewind/carry.hpp"
#include "rewind/types.hpp"

namespace rwd::testing {

// A state of `size` >= 4 whose bits matter: a signed zero, a subnormal, an infinity and a NaN
// with a payload, each depending on the step where it can; the rest 1000 step + 0.1 i.
inline Eigen::VectorXd snapshot_state(Index size, Index step) {
  Eigen::VectorXd y(size);
  for (Index i = 0; i < size; ++i)
    y[i] = 1000.0 * static_cast<double>(step) + 0.1 * static_cast<double>(i);
  y[0] = -0.0;
  y[1] = std::numeric_limits<double>::denorm_min() * static_cast<double>(step + 1);
  y[2] = -std::numeric_limits<double>::infinity();
  std::uint64_t nan_bits = 0x7ff80000000000a5ULL + static_cast<std::uint64_t>(step);
  std::memcpy(&y[3], &nan_bits, sizeof nan_bits);
  return y;
}

// The carry of y_step: every field set, none a round number.
inline Carry snapshot_carry(Index step) {
  return Carry{.t = 0.01 * static_cast<double>(step) + 1e-17,
               .h = 1.0 / 3.0,
               .error_prev = 0.7,
               .step = step,
               .rejected = 2 * step + 1,
               .noise_seed = 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(step)};
}

// Host values for a snapshot file's state: 1000 step + 0.125 i + 0.3.
inline std::vector<double> snapshot_values(Index size, Index step) {
  std::vector<double> state(static_cast<std::size_t>(size));
  for (Index i = 0; i < size; ++i)
    state[static_cast<std::size_t>(i)] =
        1000.0 * static_cast<double>(step) + 0.125 * static_cast<double>(i) + 0.3;
  return state;
}

// `size` bytes of metadata for y_step: 7 step + i (mod 256).
inline std::vector<std::byte> snapshot_meta(int size, Index step) {
  std::vector<std::byte> meta(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    meta[static_cast<std::size_t>(i)] = std::byte(static_cast<unsigned char>(step * 7 + i));
  return meta;
}

inline bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

inline bool same_bits(const Carry& a, const Carry& b) {
  return std::memcmp(&a, &b, sizeof(Carry)) == 0;
}

// Restores y_step from `slot` of `store` into a dirty state and carry and expects the bits of
// snapshot_state(size, step) and snapshot_carry(step).
template <class Store>
void expect_snapshot(Store& store, int slot, Index step, Index size) {
  Eigen::VectorXd y = Eigen::VectorXd::Constant(size, 42.0);
  Carry carry = snapshot_carry(999);
  store.restore(slot, step, y, carry);
  EXPECT_TRUE(same_bits(y, snapshot_state(size, step))) << "slot " << slot << ", y_" << step;
  EXPECT_TRUE(same_bits(carry, snapshot_carry(step))) << "slot " << slot << ", y_" << step;
}

}  // namespace rwd::testing
