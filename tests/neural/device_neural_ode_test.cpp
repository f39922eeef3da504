// rwd::nn::DeviceNeuralOde on the Thrust backend's CPP device system (the GPU code path, run on
// the CPU): against the CPU model, schedule independence, and bad input. The same checks run on a
// GPU in device_neural_ode_cuda_test.cu.
#include <gtest/gtest.h>

#include "device_neural_ode_suite.hpp"
#include "rewind/error.hpp"

namespace {

using namespace rwd::device_neural_ode_checks;
using rwd::nn::Activation;
using rwd::nn::InputFeatures;
using rwd::nn::Mlp;

TEST(DeviceNeuralOde, MatchesTheCpuModel) {
  expect_matches_cpu_model(Mlp({3, 16, 16, 3}, Activation::tanh), 7, InputFeatures::identity,
                           1e-13);
  expect_matches_cpu_model(Mlp({2, 50, 2}, Activation::tanh), 20, InputFeatures::cube, 1e-13);
}

TEST(DeviceNeuralOde, EveryActivationMatchesTheCpuModel) {
  for (const Activation a :
       {Activation::identity, Activation::relu, Activation::softplus, Activation::gelu}) {
    SCOPED_TRACE(std::string(rwd::nn::to_string(a)));
    expect_matches_cpu_model(Mlp({3, 9, 5, 3}, a, a), 4, InputFeatures::identity, 1e-13);
  }
}

// More samples than one chunk of the parameter gradient's batch sum (kBatchChunk = 128): the
// chunks' partial sums are added in order.
TEST(DeviceNeuralOde, BatchesOfSeveralChunksMatchTheCpuModel) {
  static_assert(rwd::nn::device_kernels::kBatchChunk == 128);
  expect_matches_cpu_model(Mlp({3, 8, 3}, Activation::tanh), 300, InputFeatures::identity, 1e-12);
}

TEST(DeviceNeuralOde, AccumulateAddsTheVjp) {
  expect_accumulate_adds_the_vjp(Mlp({2, 12, 2}, Activation::tanh), 9);
}

TEST(DeviceNeuralOde, EveryScheduleGivesTheSameBits) {
  expect_schedule_independence(Mlp({3, 16, 16, 3}, Activation::tanh), 6, InputFeatures::identity);
  expect_schedule_independence(Mlp({2, 10, 2}, Activation::tanh), 130, InputFeatures::cube);
}

TEST(DeviceNeuralOde, GradientMatchesTheCpuModel) {
  expect_gradient_close_to_cpu(Mlp({3, 16, 16, 3}, Activation::tanh), 5, InputFeatures::identity,
                               1e-12);
  expect_gradient_close_to_cpu(Mlp({2, 20, 2}, Activation::tanh), 4, InputFeatures::cube, 1e-12);
}

TEST(DeviceNeuralOde, RefusesBadInputBeforeAnyWork) {
  EXPECT_THROW(Model(Mlp({3, 8, 2}, Activation::tanh), 4), rwd::InvalidArgument);
  EXPECT_THROW(Model(Mlp({3, 8, 3}, Activation::tanh), 0), rwd::InvalidArgument);
  const Model model(Mlp({3, 8, 3}, Activation::tanh), 4);
  B::Vector y = B::zeros(12), theta = B::zeros(model.parameter_size()), f = B::zeros(12);
  B::Vector short_y = B::zeros(9), short_theta = B::zeros(model.parameter_size() - 1);
  EXPECT_THROW(model.rhs(0.0, short_y, theta, f), rwd::InvalidArgument);
  EXPECT_THROW(model.rhs(0.0, y, short_theta, f), rwd::InvalidArgument);
  B::Vector out_theta = B::zeros(model.parameter_size());
  EXPECT_THROW(model.vjp(0.0, y, theta, y, short_y, out_theta), rwd::InvalidArgument);
  EXPECT_THROW(model.vjp(0.0, y, theta, y, f, short_theta), rwd::InvalidArgument);
  try {
    model.rhs(0.0, short_y, theta, f);
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("3-8-3 tanh"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch 4"), std::string::npos) << e.what();
  }
}

TEST(DeviceNeuralOde, UsesItsOwnKernelsOffCuda) {
  const Model model(Mlp({3, 8, 3}, Activation::tanh), 4);
  EXPECT_EQ(model.network().products(), rwd::nn::DenseProducts::kernels);
  try {
    Model(Mlp({3, 8, 3}, Activation::tanh), 4, InputFeatures::identity,
          rwd::nn::DenseProducts::cublas);
    ADD_FAILURE() << "cuBLAS asked for on the CPP device system was not refused";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cuBLAS needs the CUDA device system"), std::string::npos)
        << e.what();
  }
}

}  // namespace
