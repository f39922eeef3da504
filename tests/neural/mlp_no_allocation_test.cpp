// Mlp::forward and Mlp::vjp never touch the heap once the workspace exists, for every
// activation, full and partial batches, and inputs given as Maps of flat state vectors: this
// executable counts every call of malloc (which operator new and Eigen both end in), as
// tests/integrators/no_allocation_test.cpp does.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

#include "rewind/neural/mlp.hpp"

#include "support/malloc_counter.hpp"

namespace {

using rwd::Index;
using rwd::nn::Activation;
using rwd::nn::Mlp;

TEST(MlpNoAllocation, CounterSeesEigenAllocations) {
  const long before = g_allocations.load();
  Eigen::MatrixXd m = Eigen::MatrixXd::Ones(10, 10);
  EXPECT_GT(g_allocations.load() - before, 0);
  EXPECT_EQ(m.sum(), 100.0);
}

TEST(MlpNoAllocation, ForwardAndVjpAfterTheWorkspaceIsMade) {
  for (Activation activation : {Activation::identity, Activation::tanh, Activation::relu,
                                Activation::softplus, Activation::gelu}) {
    // Wide enough that the products take Eigen's blocked matrix-matrix path, not only the
    // small-size coefficient loops.
    const Mlp mlp({3, 64, 64, 3}, activation, Activation::tanh);
    const Eigen::VectorXd theta = mlp.initial_parameters(1);
    const Index max_batch = 48;
    auto ws = mlp.make_workspace(max_batch);
    Eigen::VectorXd state = Eigen::VectorXd::LinSpaced(3 * max_batch, -2.0, 2.0);
    Eigen::VectorXd f(3 * max_batch),
        cotangent = Eigen::VectorXd::LinSpaced(3 * max_batch, 1.0, -1.0);
    Eigen::VectorXd grad_state(3 * max_batch), grad_theta(mlp.parameter_size());
    Eigen::MatrixXd X = Eigen::MatrixXd::Constant(3, 5, 0.5), Y(3, 5),
                    V = Eigen::MatrixXd::Ones(3, 5), gX(3, 5);

    const long before = g_allocations.load();
    for (int repeat = 0; repeat < 3; ++repeat) {
      // A neural ODE's batched state: a flat vector seen as a 3 × B matrix.
      const Eigen::Map<const Eigen::MatrixXd> Xs(state.data(), 3, max_batch);
      Eigen::Map<Eigen::MatrixXd> Ys(f.data(), 3, max_batch);
      mlp.forward(theta.data(), Xs, Ys, ws);
      mlp.vjp(theta.data(), Xs, Eigen::Map<const Eigen::MatrixXd>(cotangent.data(), 3, max_batch),
              Eigen::Map<Eigen::MatrixXd>(grad_state.data(), 3, max_batch), grad_theta.data(), ws);
      // A smaller batch in the same workspace, and single columns.
      mlp.forward(theta.data(), X, Y, ws);
      mlp.vjp(theta.data(), X, V, gX, grad_theta.data(), ws);
      mlp.vjp(theta.data(), X.col(2), V.col(2), gX.col(0), grad_theta.data(), ws);
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << to_string(activation);
    EXPECT_TRUE(f.allFinite() && grad_theta.allFinite());
  }
}

}  // namespace
