// CUDA failures reach the user as rwd::DeviceError naming the backend operation and CUDA's
// error (rewind/backend/cuda_check.hpp): a vector that does not fit the device is refused
// before allocation with the bytes requested and free, and what Thrust throws is translated.
// The translation tests need no device; the allocation tests run on a GPU machine, and without a
// device zeros must say that there is none.
#include <gtest/gtest.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system_error.h>

#include <new>
#include <string>

#include "rewind/backend/cuda_check.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "support/cuda_device.hpp"

namespace rwd {
namespace {

using B = ThrustBackend;

// The message of the DeviceError `f` throws; fails the test if it throws nothing or another type.
template <class F>
std::string device_error_of(F&& f) {
  try {
    f();
  } catch (const DeviceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "threw nothing";
  return {};
}

TEST(CudaCheck, NamesTheOperationAndTheCudaError) {
  const std::string m =
      device_error_of([] { cuda::check(cudaErrorInvalidValue, "copy the state to the host"); });
  EXPECT_NE(m.find("copy the state to the host"), std::string::npos) << m;
  EXPECT_NE(m.find("cudaErrorInvalidValue"), std::string::npos) << m;
  EXPECT_NO_THROW(cuda::check(cudaSuccess, "nothing"));
}

TEST(CudaCheck, TranslatesThrustSystemErrors) {
  const std::string m = device_error_of([] {
    cuda::translate_errors("axpy", []() -> int {
      throw thrust::system_error(cudaErrorLaunchFailure, thrust::cuda_category(), "for_each");
    });
  });
  EXPECT_NE(m.find("axpy"), std::string::npos) << m;
  EXPECT_NE(m.find(cudaGetErrorString(cudaErrorLaunchFailure)), std::string::npos) << m;
}

TEST(CudaCheck, TranslatesFailedAllocations) {
  const std::string m = device_error_of(
      [] { cuda::translate_errors("zeros", []() -> int { throw std::bad_alloc(); }); });
  EXPECT_NE(m.find("zeros: a device allocation failed"), std::string::npos) << m;
  EXPECT_NE(m.find("bytes free"), std::string::npos) << m;
}

TEST(CudaCheck, PassesResultsThrough) {
  EXPECT_EQ(cuda::translate_errors("answer", [] { return 42; }), 42);
}

TEST(ThrustBackendCudaErrors, WithoutADeviceZerosSaysSo) {
  if (testing::missing_cuda_device().empty()) GTEST_SKIP() << "a CUDA device is present";
  const std::string m = device_error_of([] { (void)B::zeros(1000); });
  EXPECT_NE(m.find("zeros: CUDA error"), std::string::npos) << m;
}

class ThrustBackendCudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(ThrustBackendCudaDevice, RefusesAStateThatDoesNotFit) {
  const cuda::DeviceMemory m = cuda::device_memory();
  ASSERT_GT(m.free_bytes, 0u);
  const Index too_many = static_cast<Index>(m.free_bytes / sizeof(double)) + (Index{1} << 20);
  const std::string zeros = device_error_of([&] { (void)B::zeros(too_many); });
  EXPECT_NE(zeros.find("zeros: a state that does not fit the device"), std::string::npos) << zeros;
  EXPECT_NE(zeros.find(std::to_string(static_cast<std::size_t>(too_many) * sizeof(double)) +
                       " bytes requested"),
            std::string::npos)
      << zeros;
  EXPECT_NE(zeros.find("bytes free of"), std::string::npos) << zeros;

  // The device is still usable afterwards: nothing was allocated, no error is left behind.
  B::Vector x = B::zeros(1000);
  B::fill(x, 2.0);
  EXPECT_EQ(B::dot(x, x), 4000.0);
}

}  // namespace
}  // namespace rwd
