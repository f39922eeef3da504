// What the neural-ODE adjoint reuses instead of recomputing gives the bits of recomputing: saved
// forward passes (Mlp workspaces with slots), per-sample parameter gradients added later in one
// pass (accumulate_vjp_per_sample with deferred calls), NeuralOde::vjp_accumulate, and the
// trainer with all of them against a plain per-sample model through the same driver.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using rwd::Index;
using rwd::nn::Activation;
using rwd::nn::Mlp;

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

Eigen::MatrixXd sample_matrix(Index rows, Index cols, double scale, double phase) {
  Eigen::MatrixXd X(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i)
      X(i, j) =
          scale * std::sin(1.3 * static_cast<double>(i) + 0.7 * static_cast<double>(j) + phase);
  return X;
}

class EveryActivation : public ::testing::TestWithParam<Activation> {};

TEST_P(EveryActivation, SavedForwardPassesGiveTheBitsOfRecomputing) {
  const Mlp mlp({3, 9, 7, 3}, GetParam());
  Eigen::VectorXd theta = mlp.initial_parameters(4);
  theta.array() += 0.03;
  const Index batch = 5;
  auto plain = mlp.make_workspace(batch);
  auto saving = mlp.make_workspace(batch, /*saved_passes=*/2);
  std::vector<Eigen::MatrixXd> X;
  for (int k = 0; k < 4; ++k) X.push_back(sample_matrix(3, batch, 1.5, 0.4 * k));
  const Eigen::MatrixXd V = sample_matrix(3, batch, 0.8, 2.0);
  Eigen::MatrixXd Y(3, batch);
  // Three passes into two slots: X[0]'s is overwritten; X[1] and X[2] are kept.
  for (int k = 0; k < 3; ++k) mlp.forward(theta.data(), X[k], Y, saving);
  Eigen::MatrixXd gx(3, batch), gx_plain(3, batch);
  Eigen::VectorXd gt(mlp.parameter_size()), gt_plain(mlp.parameter_size());
  for (int k : {2, 1, 0, 3, 2}) {  // found, found, evicted, never seen, already used
    mlp.vjp(theta.data(), X[k], V, gx, gt.data(), saving);
    mlp.vjp(theta.data(), X[k], V, gx_plain, gt_plain.data(), plain);
    EXPECT_TRUE(same_bits(gx, gx_plain)) << "pass " << k;
    EXPECT_TRUE(same_bits(gt, gt_plain)) << "pass " << k;
  }
  // Another θ (one bit) never takes a pass saved at the old one.
  mlp.forward(theta.data(), X[1], Y, saving);
  Eigen::VectorXd moved = theta;
  moved[5] = std::nextafter(moved[5], 1.0);
  mlp.vjp(moved.data(), X[1], V, gx, gt.data(), saving);
  mlp.vjp(moved.data(), X[1], V, gx_plain, gt_plain.data(), plain);
  EXPECT_TRUE(same_bits(gx, gx_plain));
  EXPECT_TRUE(same_bits(gt, gt_plain));
}

TEST_P(EveryActivation, DeferredPerSampleGradientsAddLikeOneCallAtATime) {
  // Widths and a batch that reach every path of the blocked addition: layers of fewer than 8
  // rows (along the rows), of 8 and more with a row tail (19 = 2·8 + 3, 9 = 8 + 1), column tails
  // (19 columns in blocks of 4), and a batch of 5.
  for (const std::vector<Index>& widths :
       {std::vector<Index>{2, 6, 2}, std::vector<Index>{3, 19, 9, 2}}) {
    const Mlp mlp(widths, GetParam());
    const Eigen::VectorXd theta = mlp.initial_parameters(7);
    const Index batch = widths.size() == 3 ? 4 : 5, p = mlp.parameter_size();
    const Index in = mlp.input_size(), out = mlp.output_size();
    auto plain = mlp.make_workspace(batch);
    auto deferring = mlp.make_workspace(batch, 0, /*deferred_calls=*/2);
    const Eigen::MatrixXd start = sample_matrix(p, batch, 0.3, 1.0);
    Eigen::MatrixXd expected = start, got = start, buffer(p, batch);
    Eigen::MatrixXd gx(in, batch), gx_plain(in, batch);
    for (int k = 0; k < 5; ++k) {  // more calls than slots: the waiting ones are added first
      const Eigen::MatrixXd X = sample_matrix(in, batch, 1.2, 0.3 * k);
      const Eigen::MatrixXd V = sample_matrix(out, batch, 0.7, 1.0 + k);
      mlp.vjp_per_sample(theta.data(), X, V, gx_plain, buffer, plain);
      expected += buffer;
      mlp.accumulate_vjp_per_sample(theta.data(), X, V, gx, got, deferring);
      EXPECT_TRUE(same_bits(gx, gx_plain));
    }
    mlp.add_deferred_vjps(deferring);
    EXPECT_TRUE(same_bits(got, expected)) << mlp.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Mlp, EveryActivation,
                         ::testing::Values(Activation::identity, Activation::tanh, Activation::relu,
                                           Activation::softplus, Activation::gelu));

TEST(NeuralOde, VjpAccumulateIsVjpThenAdd) {
  using rwd::nn::NeuralOde;
  const Mlp mlp({2, 8, 2}, Activation::tanh);
  const Index batch = 3;
  for (auto copies : {rwd::nn::ParameterCopies::shared, rwd::nn::ParameterCopies::per_sample}) {
    NeuralOde plain(mlp, batch, rwd::nn::InputFeatures::cube, copies);
    NeuralOde reusing(mlp, batch, rwd::nn::InputFeatures::cube, copies);
    reusing.keep_forward_passes(4);
    if (copies == rwd::nn::ParameterCopies::per_sample) reusing.defer_parameter_gradients(4);
    const Eigen::VectorXd one = mlp.initial_parameters(2);
    const Eigen::VectorXd theta =
        copies == rwd::nn::ParameterCopies::shared ? one : Eigen::VectorXd(one.replicate(batch, 1));
    Eigen::VectorXd mu_plain = Eigen::VectorXd::LinSpaced(theta.size(), -0.1, 0.2);
    Eigen::VectorXd mu = mu_plain, buffer(theta.size()), f(6), gy(6), gy_plain(6);
    for (int k = 0; k < 3; ++k) {
      const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(6, -1.0 + 0.1 * k, 1.2);
      const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(6, 0.5, -0.4 * k);
      reusing.rhs(0.0, y, theta, f);
      plain.vjp(0.0, y, theta, v, gy_plain, buffer);
      mu_plain += buffer;
      reusing.vjp_accumulate(0.0, y, theta, v, gy, mu);
      EXPECT_TRUE(same_bits(gy, gy_plain));
    }
    reusing.finish_vjp_accumulation(mu);
    EXPECT_TRUE(same_bits(mu, mu_plain));
  }
}

TEST(NeuralOdeTrainer, GradientIsThatOfAPlainPerSampleModel) {
  // The trainer keeps stages and forward passes and defers the per-window additions; a model
  // without any of that, through the driver with store-all, gives the same bits.
  const rwd::CubicSpiral spiral;
  const rwd::training::TimeSeries data = rwd::training::sample_solution(
      spiral, spiral.default_initial_state(), spiral.default_parameters(),
      rwd::ButcherTableau::rk4(), 10.0, 200, 20, {"y0", "y1"});
  const Mlp mlp({2, 12, 2}, Activation::tanh);
  rwd::training::TrainerOptions options;
  options.window = 6;
  options.batch = 4;
  options.substeps = 2;
  options.tableau = rwd::ButcherTableau::by_name("rk38");
  rwd::training::NeuralOdeTrainer trainer(mlp, rwd::nn::InputFeatures::cube, data, options);
  const Eigen::VectorXd theta = mlp.initial_parameters(3);
  const std::vector<Index> starts{5, 90, 17, 150};
  const auto result = trainer.gradient(theta, starts);

  rwd::nn::NeuralOde model(mlp, options.batch, rwd::nn::InputFeatures::cube,
                           rwd::nn::ParameterCopies::per_sample);
  rwd::ExplicitRungeKutta stepper(
      model, options.tableau,
      rwd::StepControl::fixed(0.0, trainer.spacing() / 2.0, options.window * options.substeps));
  auto objective = rwd::training::window_misfit(data, starts, options.window, options.substeps);
  rwd::CheckpointedAdjoint driver(stepper, std::move(objective));
  const auto plain =
      driver.run(rwd::training::window_initial_states(data, starts),
                 Eigen::VectorXd(theta.replicate(options.batch, 1)), rwd::store_all_schedule());
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(theta.size());
  for (Index w = 0; w < options.batch; ++w)
    sum += plain.grad_theta.segment(w * theta.size(), theta.size());
  EXPECT_TRUE(same_bits(result.grad_theta, sum));
}

}  // namespace
