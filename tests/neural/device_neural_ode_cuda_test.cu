// rwd::nn::DeviceNeuralOde on the GPU (CUDA device system): the checks of
// device_neural_ode_test.cpp on the device, with batches large enough to fill it, once with
// rewind's own kernels for the matrix products and once with cuBLAS (skipped, saying why, where
// libcublas cannot be loaded). Against the CPU model the tolerance allows for nvcc's fused
// multiply-adds and cuBLAS's summation order (see thrust_backend.hpp, device_mlp.hpp). Skipped
// without a CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "device_neural_ode_suite.hpp"
#include "rewind/neural/cuda_blas_library.hpp"
#include "support/cuda_device.hpp"

namespace {

using namespace rwd::device_neural_ode_checks;
using rwd::nn::Activation;
using rwd::nn::DenseProducts;
using rwd::nn::InputFeatures;
using rwd::nn::Mlp;

class DeviceNeuralOdeCuda : public ::testing::TestWithParam<DenseProducts> {
 protected:
  void SetUp() override {
    const std::string why = rwd::testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
    std::string no_cublas;
    if (GetParam() == DenseProducts::cublas && !rwd::nn::cublas::Library::get(&no_cublas))
      GTEST_SKIP() << no_cublas;
  }
};

TEST_P(DeviceNeuralOdeCuda, MatchesTheCpuModel) {
  expect_matches_cpu_model(Mlp({3, 64, 64, 3}, Activation::tanh), 1000, InputFeatures::identity,
                           1e-12, GetParam());
  expect_matches_cpu_model(Mlp({2, 50, 2}, Activation::tanh), 257, InputFeatures::cube, 1e-12,
                           GetParam());
  for (const Activation a : {Activation::relu, Activation::softplus, Activation::gelu})
    expect_matches_cpu_model(Mlp({3, 9, 5, 3}, a, a), 40, InputFeatures::identity, 1e-12,
                             GetParam());
}

TEST_P(DeviceNeuralOdeCuda, AccumulateAddsTheVjp) {
  expect_accumulate_adds_the_vjp(Mlp({2, 12, 2}, Activation::tanh), 500, GetParam());
}

TEST_P(DeviceNeuralOdeCuda, EveryScheduleGivesTheSameBits) {
  expect_schedule_independence(Mlp({3, 64, 64, 3}, Activation::tanh), 2048, InputFeatures::identity,
                               GetParam());
  expect_schedule_independence(Mlp({2, 50, 2}, Activation::tanh), 300, InputFeatures::cube,
                               GetParam());
}

TEST_P(DeviceNeuralOdeCuda, GradientMatchesTheCpuModel) {
  expect_gradient_close_to_cpu(Mlp({3, 64, 64, 3}, Activation::tanh), 512, InputFeatures::identity,
                               1e-11, GetParam());
}

TEST_P(DeviceNeuralOdeCuda, UsesTheProductsAskedFor) {
  const Model model(Mlp({3, 8, 3}, Activation::tanh), 4, InputFeatures::identity, GetParam());
  EXPECT_EQ(model.network().products(), GetParam()) << model.network().products_note();
}

INSTANTIATE_TEST_SUITE_P(Products, DeviceNeuralOdeCuda,
                         ::testing::Values(DenseProducts::kernels, DenseProducts::cublas),
                         [](const auto& info) {
                           return std::string(rwd::nn::to_string(info.param));
                         });

}  // namespace
