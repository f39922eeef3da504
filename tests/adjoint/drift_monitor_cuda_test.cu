// The drift monitor on the GPU: a state held in device memory is fingerprinted by the device's
// own reduction (nothing copied to the host), and the fingerprint is the host's bit for bit — the
// hash lanes are exact integer sums, whatever order the GPU adds them in; one flipped bit
// anywhere in 2^20 + 1 values is seen (drift_fingerprint_checks.hpp). Skipped without a CUDA
// device.
#include <gtest/gtest.h>

#include <string>

#include "drift_fingerprint_checks.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "support/cuda_device.hpp"

namespace rwd {
namespace {

TEST(DriftMonitorCuda, FingerprintsOnTheDeviceAreTheHostsAndSeeOneFlippedBit) {
  const std::string why = rwd::testing::missing_cuda_device();
  if (!why.empty()) GTEST_SKIP() << why;
  drift_checks::expect_fingerprints_match_the_host<ThrustBackend>((std::size_t{1} << 20) + 1);
}

}  // namespace
}  // namespace rwd
