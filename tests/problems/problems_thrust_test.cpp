// Every built-in problem on rwd::ThrustBackend (the CPP device system on CPU builds; the kernels
// are the same REWIND_HOST_DEVICE functors CUDA runs) against the Eigen backend: rhs, vjp,
// default parameters and initial states agree to ~1e-15 relative, vectors moved through host
// buffers only; and the derivative checker works through the Thrust backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "rewind/derivative_checker.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "support/host_vectors.hpp"
#include "support/random_data.hpp"

#if defined(THRUST_DEVICE_SYSTEM) && __has_include(<thrust/device_vector.h>)
#include "rewind/backend/thrust_backend.hpp"
#define REWIND_TEST_HAS_THRUST 1
#endif

namespace rwd {
namespace {

#ifdef REWIND_TEST_HAS_THRUST

using E = EigenBackend;
using T = ThrustBackend;
using Host = std::vector<double>;
using testing::random_values;
using testing::to_backend;
using testing::to_host;

// max |a − b| / max(1e-300, max |a|).
double relative_difference(const Host& a, const Host& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, scale = 1e-300;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(a[i]));
  }
  return diff / scale;
}

// Runs rhs and vjp of the same problem on both backends at host point (y, theta, v).
template <class PE, class PT>
void expect_backends_agree(const PE& pe, const PT& pt, const Host& y, const Host& theta,
                           const Host& v, double theta_gradient_tolerance = 1e-15) {
  ASSERT_EQ(pe.state_size(), pt.state_size());
  ASSERT_EQ(pe.parameter_size(), pt.parameter_size());
  const Index n = pe.state_size(), p = pe.parameter_size();

  // Defaults are built through the backend too (GrayScott's initial state by a kernel).
  EXPECT_EQ(to_host<E>(pe.default_parameters()), to_host<T>(pt.default_parameters()));
  EXPECT_EQ(to_host<E>(pe.default_initial_state()), to_host<T>(pt.default_initial_state()));

  const auto ye = to_backend<E>(y), te = to_backend<E>(theta), ve = to_backend<E>(v);
  const auto yt = to_backend<T>(y), tt = to_backend<T>(theta), vt = to_backend<T>(v);
  auto fe = E::zeros(n), oye = E::zeros(n), ote = E::zeros(p);
  auto ft = T::zeros(n), oyt = T::zeros(n), ott = T::zeros(p);

  pe.rhs(0.5, ye, te, fe);
  pt.rhs(0.5, yt, tt, ft);
  EXPECT_LE(relative_difference(to_host<E>(fe), to_host<T>(ft)), 1e-15) << PE::name;

  pe.vjp(0.5, ye, te, ve, oye, ote);
  pt.vjp(0.5, yt, tt, vt, oyt, ott);
  EXPECT_LE(relative_difference(to_host<E>(oye), to_host<T>(oyt)), 1e-15) << PE::name;
  EXPECT_LE(relative_difference(to_host<E>(ote), to_host<T>(ott)), theta_gradient_tolerance)
      << PE::name;
}

TEST(ProblemsOnThrust, Lorenz63) {
  std::mt19937_64 rng(1);
  expect_backends_agree(Lorenz63<E>(), Lorenz63<T>(), random_values(3, rng, -20, 20),
                        random_values(3, rng, 1, 30), random_values(3, rng, -1, 1));
}

TEST(ProblemsOnThrust, LotkaVolterra) {
  std::mt19937_64 rng(2);
  expect_backends_agree(LotkaVolterra<E>(), LotkaVolterra<T>(), random_values(2, rng, 0.1, 5),
                        random_values(4, rng, 0.5, 3), random_values(2, rng, -1, 1));
}

TEST(ProblemsOnThrust, VanDerPol) {
  std::mt19937_64 rng(3);
  expect_backends_agree(VanDerPol<E>(), VanDerPol<T>(), random_values(2, rng, -3, 3),
                        random_values(1, rng, 0.1, 5), random_values(2, rng, -1, 1));
}

TEST(ProblemsOnThrust, Lorenz96) {
  std::mt19937_64 rng(4);
  for (Index n : {4, 5, 40, 1000}) {
    expect_backends_agree(Lorenz96<E>(n), Lorenz96<T>(n), random_values(n, rng, -8, 12),
                          random_values(1, rng, 6, 10), random_values(n, rng, -1, 1),
                          // Σ v_i: sequential sums on both backends, but allow reordering.
                          1e-14);
  }
}

TEST(ProblemsOnThrust, LinearOde) {
  std::mt19937_64 rng(5);
  for (Index n : {1, 3, 16}) {
    expect_backends_agree(LinearOde<E>(n), LinearOde<T>(n), random_values(n, rng, -2, 2),
                          random_values(n * n, rng, -1, 1), random_values(n, rng, -1, 1));
  }
}

TEST(ProblemsOnThrust, GrayScott) {
  std::mt19937_64 rng(6);
  for (Index n : {3, 8, 64}) {
    const Index values = 2 * n * n;
    Host theta = {0.16, 0.08, 0.035, 0.065};
    // Eigen runs row kernels, Thrust cell kernels: the same arithmetic per cell (bitwise equal
    // rhs and state vjp), but the parameter gradient sums n² terms in a different order.
    expect_backends_agree(GrayScott<E>(n), GrayScott<T>(n), random_values(values, rng, 0, 1), theta,
                          random_values(values, rng, -1, 1), 1e-13);
  }
}

TEST(ProblemsOnThrust, DerivativeCheckerRunsThroughTheBackend) {
  DerivativeCheckOptions options;
  options.tolerance = 1e-7;
  {
    Lorenz63<T> p;
    const auto report = check_derivatives(p, 0.0, to_backend<T>({1.5, -2.0, 20.0}),
                                          p.default_parameters(), options);
    EXPECT_TRUE(report.ok) << report.report();
    EXPECT_EQ(report.state.mode, JacobianCheckMode::kFull);
  }
  {
    GrayScott<T> p(6);
    std::mt19937_64 rng(7);
    const auto report = check_derivatives(p, 0.0, to_backend<T>(random_values(72, rng, 0, 1)),
                                          p.default_parameters(), options);
    EXPECT_TRUE(report.ok) << report.report();
    EXPECT_EQ(report.state.mode, JacobianCheckMode::kRandomDirections);
  }
  {
    Lorenz96<T> p(10);
    const auto report =
        check_derivatives(p, 0.0, p.default_initial_state(), p.default_parameters(), options);
    EXPECT_TRUE(report.ok) << report.report();
  }
}

#else

TEST(ProblemsOnThrust, Skipped) {
  GTEST_SKIP() << "built without the Thrust backend";
}

#endif

}  // namespace
}  // namespace rwd
