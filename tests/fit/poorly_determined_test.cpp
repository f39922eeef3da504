// rwd::warn_if_poorly_determined: a fit that converged to numbers the data do not fix says so
// (rwd::warn, source "fit") — an estimate whose standard error exceeds its magnitude, with the
// estimate it is most correlated with when |ρ| ≥ 0.99, and a Hessian that is not positive
// definite — and a well-determined fit says nothing. rwd::fit warns through it: decay at the
// rate a + b, fitted for a and b, determines only their sum.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "rewind/fit/fit_data.hpp"
#include "rewind/fit/parameter_uncertainty.hpp"
#include "rewind/model.hpp"
#include "rewind/warning.hpp"

namespace rwd {
namespace {

std::vector<std::string> warnings_of(const std::function<void()>& call) {
  std::vector<std::string> seen;
  ScopedWarningHandler capture([&](const Warning& w) {
    EXPECT_EQ(w.source, "fit");
    seen.push_back(w.message);
  });
  call();
  return seen;
}

TEST(PoorlyDetermined, NamesAnEstimateWhoseErrorExceedsItAndItsCorrelate) {
  // b's standard error is 5 times b, and b and a are correlated −0.999; c is well determined.
  const Eigen::VectorXd estimates{{1.0, 2.0, 3.0}}, errors{{0.1, 10.0, 0.01}};
  Eigen::MatrixXd covariance = errors.cwiseProduct(errors).asDiagonal();
  covariance(0, 1) = covariance(1, 0) = -0.999 * errors[0] * errors[1];
  const auto seen = warnings_of([&] {
    warn_if_poorly_determined({"a", "b", "c"}, estimates, errors, covariance, true);
  });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("the data hardly determine b: its standard error is 5 times its "
                         "estimate (correlation -0.999 with a: the data fix mainly a combination "
                         "of the two)"),
            std::string::npos)
      << seen[0];
}

TEST(PoorlyDetermined, NamesAModestErrorAlongANearlyDegenerateValley) {
  // 25 % errors, correlated −0.9999 (Gray–Scott's F and k from 200 steps on a 16² grid).
  const Eigen::VectorXd estimates{{0.12, 0.2}}, errors{{0.03, 0.05}};
  Eigen::MatrixXd covariance = errors.cwiseProduct(errors).asDiagonal();
  covariance(0, 1) = covariance(1, 0) = -0.9999 * errors[0] * errors[1];
  const auto seen = warnings_of([&] {
    warn_if_poorly_determined({"F", "k"}, estimates, errors, covariance, true);
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].find("the data hardly determine F: its standard error is 0.25 times its "
                         "estimate (correlation -1 with k"),
            std::string::npos)
      << seen[0];
}

TEST(PoorlyDetermined, SaysNothingOfAWellDeterminedFitAndWarnsWithoutStandardErrors) {
  // Correlated 0.9999 but each to 1 %: fixed (Robertson's k2 and k3 from its 16 rows).
  const Eigen::VectorXd estimates{{1.0, 2.0}}, errors{{0.01, 0.02}};
  Eigen::MatrixXd covariance = errors.cwiseProduct(errors).asDiagonal();
  covariance(0, 1) = covariance(1, 0) = 0.9999 * errors[0] * errors[1];
  EXPECT_TRUE(warnings_of([&] {
                warn_if_poorly_determined({"a", "b"}, estimates, errors, covariance, true);
              }).empty());
  const auto seen = warnings_of([&] {
    warn_if_poorly_determined({"a", "b"}, estimates, errors, covariance, false);
  });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("not positive definite: no standard errors"), std::string::npos);
}

// y' = −(a + b) y: the data fix a + b only.
struct TwoRatesOneDecay {
  static constexpr std::array<const char*, 1> state_names{"y"};
  static constexpr std::array<const char*, 2> parameter_names{"a", "b"};
  static constexpr std::array<double, 2> default_parameters{0.3, 0.2};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    f[0] = -(p[0] + p[1]) * y[0];
  }
};

TEST(PoorlyDetermined, AFitOfRatesTheDataDoNotSeparateWarns) {
  const auto problem = auto_problem(TwoRatesOneDecay{});
  TimeSeries data;
  data.times = {0.5, 1.0, 1.5, 2.0, 3.0};
  data.columns = {"y"};
  data.values.resize(5, 1);
  for (Index k = 0; k < 5; ++k)
    data.values(k, 0) = std::exp(-0.5 * data.times[static_cast<std::size_t>(k)]) +
                        1e-3 * std::sin(3.0 * static_cast<double>(k));
  FitSpec spec;
  spec.initial_state = Eigen::VectorXd{{1.0}};
  spec.fit = {{"a", 0.4, 0.0, 2.0}, {"b", 0.4, 0.0, 2.0}};
  spec.max_step = 0.05;
  DataFitResult result;
  const auto seen = warnings_of([&] { result = fit(problem, data, spec); });
  ASSERT_FALSE(result.failed) << result.status;
  EXPECT_NEAR(result.estimates[0] + result.estimates[1], 0.5, 1e-3);  // the sum is determined
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen[0].find("not positive definite") != std::string::npos ||
              seen[0].find("the data hardly determine") != std::string::npos)
      << seen[0];

  spec.fit = {{"a", 0.4, 0.0, 2.0}};  // b held: a alone is determined
  EXPECT_TRUE(warnings_of([&] { result = fit(problem, data, spec); }).empty());
}

}  // namespace
}  // namespace rwd
