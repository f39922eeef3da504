// The backend conformance suite (backend_conformance_suite.hpp) on the CPU backends: Eigen, and
// Thrust compiled by the C++ compiler on its CPP device system (linked through rewind::thrust_cpp,
// which defines THRUST_DEVICE_SYSTEM; without it, as with -DREWIND_WITH_THRUST=OFF, Eigen only).
#include "backend_conformance_suite.hpp"

#include <cmath>
#include <limits>

#include "rewind/backend/eigen_backend.hpp"
#if defined(THRUST_DEVICE_SYSTEM)
#include "rewind/backend/thrust_backend.hpp"
#endif

namespace rwd::conformance {

#if defined(THRUST_DEVICE_SYSTEM)
using CpuBackends = ::testing::Types<EigenBackend, ThrustBackend>;
#else
using CpuBackends = ::testing::Types<EigenBackend>;
#endif
INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, BackendConformance, CpuBackends, BackendName);

#if defined(THRUST_DEVICE_SYSTEM)

TEST(ThrustBackendCpp, IsTheDeterministicCppDeviceSystem) {
  EXPECT_TRUE(ThrustBackend::deterministic);
  EXPECT_STREQ(ThrustBackend::name, "thrust-cpp");
}

TEST(ThrustBackendCpp, MaxNormPropagatesNan) {
  using B = ThrustBackend;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Host& h : {Host{nan, 1.0, 2.0}, Host{1.0, nan, 2.0}, Host{1.0, 2.0, nan}})
    EXPECT_TRUE(std::isnan(B::max_norm(to_backend<B>(h))));
}

TEST(ThrustBackendCpp, RefusesCombinationsItCannotFuse) {
  expect_refuses_bad_combinations<ThrustBackend>();
}

TEST(ThrustBackendCpp, RefusesVectorsOfDifferentSizes) {
  using B = ThrustBackend;
  const B::Vector x = B::zeros(3);
  B::Vector y = B::zeros(4);
  EXPECT_THROW(B::axpy(1.0, x, y), InvalidArgument);
  EXPECT_THROW(B::dot(x, y), InvalidArgument);
  EXPECT_THROW(B::wrms_norm(x, y), InvalidArgument);
  EXPECT_THROW(B::error_norm(x, x, y, 1e-3, 1e-6), InvalidArgument);
  const double c[] = {1.0};
  const B::Vector* v[] = {&x};
  EXPECT_THROW(B::linear_combination(y, 2.0, x, c, v), InvalidArgument);
  EXPECT_THROW(B::linear_combination(y, c, v), InvalidArgument);
  EXPECT_THROW(B::zeros(-1), InvalidArgument);
}

#endif  // THRUST_DEVICE_SYSTEM

}  // namespace rwd::conformance
