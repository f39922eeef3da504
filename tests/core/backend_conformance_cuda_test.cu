// The backend conformance suite (backend_conformance_suite.hpp) on ThrustBackend compiled by
// nvcc for the CUDA device system (linked through rewind::thrust_cuda). Without a usable CUDA
// device (no GPU, or no driver) every test is skipped, so the suite passes on build machines and
// really runs on a GPU machine.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "backend_conformance_suite.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "support/cuda_device.hpp"

namespace rwd::conformance {

using rwd::testing::missing_cuda_device;

template <>
struct DeviceCheck<ThrustBackend> {
  static std::string missing() { return missing_cuda_device(); }
};

// nvcc's fused multiply-adds (REWIND_CUDA_FMAD=1, the default) change the last bits of a·x + c·v
// against the host reference; with --fmad=false the results are the host's, bit for bit.
template <>
struct ElementwiseMatchesHost<ThrustBackend> {
  static constexpr bool value = REWIND_CUDA_FMAD == 0;
};

using CudaBackends = ::testing::Types<ThrustBackend>;
INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, BackendConformance, CudaBackends, BackendName);

class ThrustBackendCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

// Needs no device: runs (and prints the versions) on build machines too.
TEST(ThrustBackendCudaBuild, UsesTheToolkitThrust) {
  // Debian's Thrust 1.x must never reach nvcc (the header refuses it from CUDA 12 on).
  std::printf("THRUST_VERSION %d, CUDA runtime headers %d\n", THRUST_VERSION, CUDART_VERSION);
  EXPECT_GE(THRUST_VERSION, 200000);
  EXPECT_TRUE(ThrustBackend::deterministic);  // fixed decomposition on every device system
  EXPECT_STREQ(ThrustBackend::name, "thrust-cuda");
}

TEST_F(ThrustBackendCuda, RefusesCombinationsItCannotFuse) {
  expect_refuses_bad_combinations<ThrustBackend>();
}

// A __host__ __device__ extended lambda works with both index templates. (nvcc refuses extended
// lambdas inside a TEST body, which is a private member function: they live in a free function.)
inline Sums<2> even_numbers_and_count(Index n) {
  using B = ThrustBackend;
  B::Vector y = B::zeros(n);
  double* p = B::data(y);
  B::for_each_index(n, [p] __host__ __device__(Index i) { p[i] = 2.0 * static_cast<double>(i); });
  return B::sum_index<2>(n, [p] __host__ __device__(Index i) {
    Sums<2> r{};
    r.v[0] = p[i];
    r.v[1] = 1.0;
    return r;
  });
}

TEST_F(ThrustBackendCuda, AcceptsExtendedLambdas) {
  const Index n = 1000;
  const Sums<2> s = even_numbers_and_count(n);
  EXPECT_EQ(s[0], static_cast<double>(n) * static_cast<double>(n - 1));
  EXPECT_EQ(s[1], static_cast<double>(n));
}

}  // namespace rwd::conformance
