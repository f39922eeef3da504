// Whether a CUDA device can run the *_cuda_test.cu suites here: they call missing_cuda_device()
// in SetUp and skip with its reason, so they pass on build machines without a GPU and really run
// on a GPU machine.
//
//   void SetUp() override {
//     if (const std::string why = rwd::testing::missing_cuda_device(); !why.empty())
//       GTEST_SKIP() << why;
//   }
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace rwd::testing {

// Empty when a device is usable, else why not (no GPU, no driver, a driver too old).
inline std::string missing_cuda_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(status) +
           ")";
  if (count == 0) return "no CUDA device";
  return {};
}

}  // namespace rwd::testing
