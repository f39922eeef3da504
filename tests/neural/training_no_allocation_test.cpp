// The optimizers' step() and the window sampler's next_batch(starts) do not touch the heap once
// sized: this executable counts every call of malloc (which operator new and Eigen both end in),
// as tests/integrators/no_allocation_test.cpp does.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "rewind/neural/adam.hpp"
#include "rewind/neural/sgd.hpp"
#include "rewind/neural/window_sampler.hpp"

#include "support/malloc_counter.hpp"

namespace {

TEST(TrainingNoAllocation, CounterSeesEigenAllocations) {
  const long before = g_allocations.load();
  Eigen::VectorXd v = Eigen::VectorXd::Ones(100);
  EXPECT_GT(g_allocations.load() - before, 0);
  EXPECT_EQ(v.sum(), 100.0);
}

void expect_no_allocation(rwd::training::Optimizer& optimizer) {
  Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(1000, -1.0, 1.0);
  Eigen::VectorXd gradient = Eigen::VectorXd::Constant(1000, 0.5);
  optimizer.step(theta, gradient);  // sizes the state
  long before = g_allocations.load();
  for (int i = 0; i < 100; ++i) optimizer.step(theta, gradient);
  EXPECT_EQ(g_allocations.load() - before, 0) << optimizer.name();
  optimizer.reset();
  before = g_allocations.load();
  for (int i = 0; i < 100; ++i) optimizer.step(theta, gradient);
  EXPECT_EQ(g_allocations.load() - before, 0) << optimizer.name() << " after reset()";
}

TEST(TrainingNoAllocation, OptimizerStepsAfterTheFirst) {
  rwd::training::AdamOptions adam_options;
  adam_options.weight_decay = 1e-2;
  rwd::training::Adam adam(adam_options);
  expect_no_allocation(adam);
  rwd::training::Sgd sgd;
  expect_no_allocation(sgd);
  rwd::training::SgdOptions momentum;
  momentum.momentum = 0.9;
  rwd::training::Sgd heavy_ball(momentum);
  expect_no_allocation(heavy_ball);
  momentum.nesterov = true;
  rwd::training::Sgd nesterov(momentum);
  expect_no_allocation(nesterov);
}

TEST(TrainingNoAllocation, SamplerIntoAnExistingVector) {
  rwd::training::WindowSampler sampler(500, 10, 32, 3);
  std::vector<rwd::Index> starts;
  sampler.next_batch(starts);
  const long before = g_allocations.load();
  for (int i = 0; i < 100; ++i) sampler.next_batch(starts);
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_EQ(starts.size(), 32u);
}

}  // namespace
