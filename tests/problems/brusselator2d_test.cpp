// The 2D Brusselator: exact VJPs (finite differences in full mode on a small grid), the
// homogeneous steady state, and the band structure the BDF band solver relies on.
#include <gtest/gtest.h>

#include "rewind/derivative_checker.hpp"
#include "rewind/problems/brusselator2d.hpp"

namespace {

TEST(Brusselator2D, VjpMatchesFiniteDifferences) {
  rwd::Brusselator2D model(4);  // 32 unknowns: every Jacobian entry is compared
  const auto report = rwd::check_derivatives(model, 0.0, model.default_initial_state(), model.default_parameters());
  EXPECT_TRUE(report.ok) << report.report();
}

TEST(Brusselator2D, HomogeneousSteadyStateIsAFixedPoint) {
  rwd::Brusselator2D model(8);
  const auto theta = model.default_parameters();
  Eigen::VectorXd y(model.state_size()), f(model.state_size());
  for (rwd::Index i = 0; i < model.state_size(); i += 2) {
    y[i] = theta[0];                 // u = A
    y[i + 1] = theta[1] / theta[0];  // v = B / A
  }
  model.rhs(0.0, y, theta, f);
  EXPECT_LT(f.cwiseAbs().maxCoeff(), 1e-14);
}

TEST(Brusselator2D, JacobianIsBandedWithTheStatedWidth) {
  // A unit perturbation of unknown j changes f only within j ± band_width().
  rwd::Brusselator2D model(5);
  const auto theta = model.default_parameters();
  const Eigen::VectorXd y = model.default_initial_state();
  Eigen::VectorXd f0(model.state_size()), f1(model.state_size());
  model.rhs(0.0, y, theta, f0);
  for (rwd::Index j = 0; j < model.state_size(); ++j) {
    Eigen::VectorXd z = y;
    z[j] += 1e-3;
    model.rhs(0.0, z, theta, f1);
    for (rwd::Index i = 0; i < model.state_size(); ++i)
      if (f1[i] != f0[i]) {
        EXPECT_LE(std::abs(i - j), model.band_width()) << "entry (" << i << ", " << j << ")";
      }
  }
}

}  // namespace
