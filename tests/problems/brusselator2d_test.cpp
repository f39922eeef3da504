// The 2D Brusselator: the homogeneous steady state is a fixed point of rhs. The contract every
// problem keeps (the vjp against finite differences, the jvp against the vjp, ∂f/∂y within the
// declared band_width(), outputs overwritten, sizes refused) is checked in
// problem_contract_test.cpp.
#include <gtest/gtest.h>

#include "rewind/problems/brusselator2d.hpp"

namespace {

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

}  // namespace
