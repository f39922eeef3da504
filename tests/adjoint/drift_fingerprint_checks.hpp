// The drift monitor's fingerprints, checked on any backend B against the Eigen backend's: one
// state of a few hundred thousand values is recorded on the host (EigenBackend), the monitor's
// saved fingerprints are loaded into a monitor of backend B, and B then checks
//  * the same values: no mismatch — the hash lanes are exact integer sums, so the fingerprint of
//    B (a GPU's reduction, another thread count) is the host's bit for bit;
//  * the same values with one bit flipped, at several places and bits (sign, exponent, the last
//    bit of the mantissa): a mismatch every time, and a relative drift of the right size.
// Used by drift_monitor_test.cpp (thrust-cpp) and drift_monitor_cuda_test.cu (the GPU).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "support/random_data.hpp"

namespace rwd::drift_checks {

inline double with_flipped_bit(double x, int bit) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits ^= std::uint64_t{1} << bit;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

template <class B>
void expect_fingerprints_match_the_host(std::size_t n) {
  const std::vector<double> values =
      rwd::testing::random_values(static_cast<Index>(n), /*seed=*/29);
  const Index size = static_cast<Index>(n);
  std::vector<std::byte> saved;
  {
    DriftMonitor<EigenBackend> host(/*steps=*/4, size, DriftPolicy::ignore, 8);
    EigenBackend::Vector y = EigenBackend::zeros(size);
    EigenBackend::copy_from_host(values, y);
    host.record(0, y);
    host.save(saved, 0);
  }
  DriftMonitor<B> device(/*steps=*/4, size, DriftPolicy::ignore, 8);
  ASSERT_TRUE(device.load(saved));
  typename B::Vector y = B::zeros(size);
  B::copy_from_host(values, y);
  device.check(0, 0.0, y);
  EXPECT_EQ(device.report().mismatched_steps, 0) << "the same values, fingerprinted on " << B::name;

  Index expected = 0;
  for (const std::size_t at : {std::size_t{0}, n / 3, n - 1})
    for (const int bit : {0, 1, 30, 52, 62, 63}) {
      SCOPED_TRACE("element " + std::to_string(at) + ", bit " + std::to_string(bit));
      std::vector<double> changed = values;
      changed[at] = with_flipped_bit(changed[at], bit);
      B::copy_from_host(changed, y);
      device.check(0, 0.0, y);
      ++expected;
      EXPECT_EQ(device.report().mismatched_steps, expected) << "one flipped bit goes unseen";
    }
  EXPECT_GT(device.report().max_rel_drift, 0.0);
  EXPECT_EQ(device.report().first_drift_step, 0);
}

}  // namespace rwd::drift_checks
