// tests/neural/device_neural_ode_suite.hpp — the checks of rwd::nn::DeviceNeuralOde, shared by
// the CPP device system (device_neural_ode_test.cpp, every build) and the CUDA device system
// (device_neural_ode_cuda_test.cu, on a GPU machine).
//
//   expect_matches_cpu_model(shape, batch, features, tolerance)
//       rhs and vjp against rwd::nn::NeuralOde (the CPU model, whose VJP mlp_test checks against
//       finite differences) at pseudo-random states, parameters and cotangents;
//   expect_accumulate_adds_the_vjp(shape, batch)
//       vjp_accumulate = vjp into a buffer and then μ += buffer, bit for bit;
//   expect_schedule_independence(shape, batch, features)
//       store-all and revolve with 2, 3 and 5 snapshots give the same loss, dJ/dy0, dJ/dθ and y_N
//       bits on the device, and revolve did recompute;
//   expect_gradient_close_to_cpu(shape, batch, features, tolerance)
//       the whole store-all gradient on the device against the CPU model's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/device_neural_ode.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/host_vectors.hpp"
#include "support/random_data.hpp"

namespace rwd::device_neural_ode_checks {

using Host = std::vector<double>;
using B = ThrustBackend;
using Model = nn::DeviceNeuralOde<B>;

// n values uniform in [-scale, scale), seeded.
inline Host pseudo_random(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  return testing::random_values(static_cast<Index>(n), seed, -scale, scale);
}

// max_i |a_i − b_i| / max_i |b_i|.
inline double max_relative(const Host& a, const Host& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, size = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    size = std::max(size, std::abs(b[i]));
  }
  return diff / std::max(size, 1e-300);
}

inline Eigen::VectorXd to_eigen(const Host& h) {
  return Eigen::Map<const Eigen::VectorXd>(h.data(), static_cast<Eigen::Index>(h.size()));
}
inline Host from_eigen(const Eigen::VectorXd& v) {
  return Host(v.data(), v.data() + v.size());
}

inline void expect_matches_cpu_model(const nn::Mlp& shape, Index batch, nn::InputFeatures features,
                                     double tolerance,
                                     nn::DenseProducts products = nn::DenseProducts::automatic) {
  const Model device(shape, batch, features, products);
  const nn::NeuralOde cpu(shape, batch, features);
  const auto n = static_cast<std::size_t>(device.state_size());
  const Host y = pseudo_random(n, 1), v = pseudo_random(n, 2);
  const Host theta = pseudo_random(static_cast<std::size_t>(shape.parameter_size()), 3, 0.5);

  Eigen::VectorXd f_cpu(device.state_size()), gy_cpu(device.state_size()),
      gt_cpu(shape.parameter_size());
  cpu.rhs(0.0, to_eigen(y), to_eigen(theta), f_cpu);
  cpu.vjp(0.0, to_eigen(y), to_eigen(theta), to_eigen(v), gy_cpu, gt_cpu);

  const B::Vector yd = testing::to_backend<B>(y), vd = testing::to_backend<B>(v),
                  td = testing::to_backend<B>(theta);
  B::Vector f = B::zeros(device.state_size()), gy = B::zeros(device.state_size()),
            gt = B::zeros(device.parameter_size());
  device.rhs(0.0, yd, td, f);
  device.vjp(0.0, yd, td, vd, gy, gt);
  EXPECT_LT(max_relative(testing::to_host<B>(f), from_eigen(f_cpu)), tolerance) << "rhs";
  EXPECT_LT(max_relative(testing::to_host<B>(gy), from_eigen(gy_cpu)), tolerance) << "(∂f/∂y)ᵀ v";
  EXPECT_LT(max_relative(testing::to_host<B>(gt), from_eigen(gt_cpu)), tolerance) << "(∂f/∂θ)ᵀ v";

  // The same call again: the same bits (no state carried between calls).
  B::Vector f2 = B::zeros(device.state_size()), gy2 = B::zeros(device.state_size()),
            gt2 = B::zeros(device.parameter_size());
  device.rhs(0.0, yd, td, f2);
  device.vjp(0.0, yd, td, vd, gy2, gt2);
  EXPECT_TRUE(testing::to_host<B>(f2) == testing::to_host<B>(f));
  EXPECT_TRUE(testing::to_host<B>(gy2) == testing::to_host<B>(gy));
  EXPECT_TRUE(testing::to_host<B>(gt2) == testing::to_host<B>(gt));
}

inline void expect_accumulate_adds_the_vjp(
    const nn::Mlp& shape, Index batch, nn::DenseProducts products = nn::DenseProducts::automatic) {
  const Model device(shape, batch, nn::InputFeatures::cube, products);
  const auto n = static_cast<std::size_t>(device.state_size());
  const auto p = static_cast<std::size_t>(device.parameter_size());
  const B::Vector y = testing::to_backend<B>(pseudo_random(n, 4)),
                  v = testing::to_backend<B>(pseudo_random(n, 5)),
                  theta = testing::to_backend<B>(pseudo_random(p, 6, 0.5));
  const Host mu0 = pseudo_random(p, 7);
  B::Vector gy = B::zeros(device.state_size()), buffer = B::zeros(device.parameter_size());
  device.vjp(0.0, y, theta, v, gy, buffer);
  B::Vector expected = testing::to_backend<B>(mu0);
  B::axpy(1.0, buffer, expected);

  B::Vector mu = testing::to_backend<B>(mu0), gy_acc = B::zeros(device.state_size());
  device.vjp_accumulate(0.0, y, theta, v, gy_acc, mu);
  EXPECT_TRUE(testing::to_host<B>(mu) == testing::to_host<B>(expected));
  EXPECT_TRUE(testing::to_host<B>(gy_acc) == testing::to_host<B>(gy));
}

// A result on the host: what two runs must share bit for bit.
struct HostGradient {
  double loss = 0.0;
  Host grad_y0, grad_theta, y_final;
  Index recomputed_steps = 0;
  template <class Backend, class Result>
  static HostGradient of(const Result& r) {
    return {r.loss, testing::to_host<Backend>(r.grad_y0), testing::to_host<Backend>(r.grad_theta),
            testing::to_host<Backend>(r.y_final), r.summary.recomputed_steps};
  }
};

inline constexpr Index kSteps = 24;
inline StepControl steps() {
  return StepControl::fixed(0.0, 0.05, kSteps);
}

// ½ Σ_k |y_k − d_k|² at every fourth step, d_k pseudo-random: a training window's loss.
template <class Backend>
Objective<Backend> window_misfit(Index state_size) {
  std::vector<Index> observed;
  std::vector<typename Backend::Vector> data;
  for (Index k = 4; k <= kSteps; k += 4) {
    observed.push_back(k);
    data.push_back(testing::to_backend<Backend>(
        pseudo_random(static_cast<std::size_t>(state_size), 100 + static_cast<std::uint64_t>(k))));
  }
  return Objective<Backend>::trajectory_misfit(std::move(observed), std::move(data));
}

template <class Problem>
HostGradient store_all_gradient(const Problem& problem, const Host& y0, const Host& theta) {
  using Backend = typename Problem::Backend;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), steps());
  StoreAllAdjoint driver(stepper, window_misfit<Backend>(problem.state_size()));
  return HostGradient::of<Backend>(
      driver.run(testing::to_backend<Backend>(y0), testing::to_backend<Backend>(theta)));
}

inline void expect_same_bits(const HostGradient& a, const HostGradient& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_TRUE(a.grad_y0 == b.grad_y0) << "dJ/dy0 differs";
  EXPECT_TRUE(a.grad_theta == b.grad_theta) << "dJ/dθ differs";
  EXPECT_TRUE(a.y_final == b.y_final) << "y_N differs";
}

inline void expect_schedule_independence(
    const nn::Mlp& shape, Index batch, nn::InputFeatures features,
    nn::DenseProducts products = nn::DenseProducts::automatic) {
  ASSERT_TRUE(B::deterministic);
  const Model model(shape, batch, features, products);
  const Host y0 = pseudo_random(static_cast<std::size_t>(model.state_size()), 8);
  const Host theta = from_eigen(shape.initial_parameters(1));
  const HostGradient store_all = store_all_gradient(model, y0, theta);
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), steps());
  CheckpointedAdjoint driver(stepper, window_misfit<B>(model.state_size()));
  for (const int snapshots : {2, 3, 5}) {
    SCOPED_TRACE(::testing::Message() << "revolve with " << snapshots << " snapshots");
    const HostGradient revolve = HostGradient::of<B>(driver.run(
        testing::to_backend<B>(y0), testing::to_backend<B>(theta), revolve_schedule(snapshots)));
    expect_same_bits(revolve, store_all);
    EXPECT_GT(revolve.recomputed_steps, 0);
  }
  expect_same_bits(store_all_gradient(model, y0, theta), store_all);
}

inline void expect_gradient_close_to_cpu(
    const nn::Mlp& shape, Index batch, nn::InputFeatures features, double tolerance,
    nn::DenseProducts products = nn::DenseProducts::automatic) {
  const Model device(shape, batch, features, products);
  const nn::NeuralOde cpu(shape, batch, features);
  const Host y0 = pseudo_random(static_cast<std::size_t>(device.state_size()), 9);
  const Host theta = from_eigen(shape.initial_parameters(2));
  const HostGradient d = store_all_gradient(device, y0, theta);
  const HostGradient c = store_all_gradient(cpu, y0, theta);
  EXPECT_NEAR(d.loss, c.loss, tolerance * std::abs(c.loss));
  EXPECT_LT(max_relative(d.grad_y0, c.grad_y0), tolerance);
  EXPECT_LT(max_relative(d.grad_theta, c.grad_theta), tolerance);
  EXPECT_LT(max_relative(d.y_final, c.y_final), tolerance);
  EXPECT_GT(c.loss, 0.0);
}

}  // namespace rwd::device_neural_ode_checks
