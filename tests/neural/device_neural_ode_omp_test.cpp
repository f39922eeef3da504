// rwd::nn::DeviceNeuralOde on the Thrust backend's OMP device system: the kernels run on several
// threads, and the results must still be the CPU model's to round-off and the same bits for every
// schedule (every value is one fixed chain, whichever thread computes it).
#include <gtest/gtest.h>

#include "device_neural_ode_suite.hpp"

namespace {

using namespace rwd::device_neural_ode_checks;
using rwd::nn::Activation;
using rwd::nn::InputFeatures;
using rwd::nn::Mlp;

TEST(DeviceNeuralOdeOmp, MatchesTheCpuModel) {
  expect_matches_cpu_model(Mlp({3, 16, 16, 3}, Activation::tanh), 300, InputFeatures::identity,
                           1e-12);
}

TEST(DeviceNeuralOdeOmp, EveryScheduleGivesTheSameBits) {
  expect_schedule_independence(Mlp({2, 10, 2}, Activation::tanh), 260, InputFeatures::cube);
}

}  // namespace
