// The MLP and its activations: exact VJPs (central differences for grad_X and grad_θ with
// every activation, batch 1 and batch > 1; the dot-product test against a finite-difference
// JVP; batch = sum of samples), determinism (same bits every call, initial parameters equal to
// hard-coded values on every platform), the activations' values and derivatives, and refusal of
// bad shapes and sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/activation.hpp"
#include "rewind/neural/mlp.hpp"
#include "support/error_message.hpp"

namespace {

using rwd::Index;
using rwd::nn::Activation;
using rwd::nn::DenseLayerShape;
using rwd::nn::Mlp;

constexpr Activation kEveryActivation[] = {Activation::identity, Activation::tanh, Activation::relu,
                                           Activation::softplus, Activation::gelu};

// Smooth, sign-changing test data with no structure a network could exploit by accident.
Eigen::MatrixXd sample_matrix(Index rows, Index cols, double scale, double phase = 0.2) {
  Eigen::MatrixXd X(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i)
      X(i, j) =
          scale * std::sin(1.1 * static_cast<double>(i) + 0.7 * static_cast<double>(j) + phase);
  return X;
}

Eigen::MatrixXd forward(const Mlp& mlp, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X) {
  auto ws = mlp.make_workspace(std::max<Index>(X.cols(), 1));
  Eigen::MatrixXd Y(mlp.output_size(), X.cols());
  mlp.forward(theta.data(), X, Y, ws);
  return Y;
}

// L(θ, X) = ⟨V, mlp(X; θ)⟩: its gradients are exactly what vjp returns.
double pairing(const Mlp& mlp, const Eigen::VectorXd& theta, const Eigen::MatrixXd& X,
               const Eigen::MatrixXd& V) {
  return (V.array() * forward(mlp, theta, X).array()).sum();
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// Parameters away from the initial zero biases, so that every bias derivative is exercised at a
// generic point (and no relu pre-activation sits on its kink).
Eigen::VectorXd generic_parameters(const Mlp& mlp, std::uint64_t seed) {
  return mlp.initial_parameters(seed) +
         0.05 * Eigen::VectorXd::LinSpaced(mlp.parameter_size(), -1.0, 1.3);
}

class EveryActivation : public ::testing::TestWithParam<Activation> {};

TEST_P(EveryActivation, VjpMatchesCentralDifferences) {
  // The activation after the hidden layers and after the output, so every derivative is used
  // in both positions.
  const Mlp mlp({3, 6, 5, 2}, GetParam(), GetParam());
  const Eigen::VectorXd theta = generic_parameters(mlp, 5);
  for (Index batch : {Index{1}, Index{4}}) {
    const Eigen::MatrixXd X = sample_matrix(3, batch, 1.3);
    const Eigen::MatrixXd V = sample_matrix(2, batch, 0.8, 1.0);
    auto ws = mlp.make_workspace(batch);
    Eigen::MatrixXd grad_X(3, batch);
    Eigen::VectorXd grad_theta(mlp.parameter_size());
    mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);

    const double h = 1e-6;
    Eigen::VectorXd fd_theta(mlp.parameter_size());
    for (Index j = 0; j < mlp.parameter_size(); ++j) {
      Eigen::VectorXd plus = theta, minus = theta;
      plus[j] += h;
      minus[j] -= h;
      fd_theta[j] = (pairing(mlp, plus, X, V) - pairing(mlp, minus, X, V)) / (2 * h);
      EXPECT_NEAR(grad_theta[j], fd_theta[j], 1e-7 * std::max(1.0, std::abs(fd_theta[j])))
          << "theta[" << j << "], batch " << batch;
    }
    Eigen::MatrixXd fd_X(3, batch);
    for (Index i = 0; i < X.size(); ++i) {
      Eigen::MatrixXd plus = X, minus = X;
      plus.data()[i] += h;
      minus.data()[i] -= h;
      fd_X.data()[i] = (pairing(mlp, theta, plus, V) - pairing(mlp, theta, minus, V)) / (2 * h);
      EXPECT_NEAR(grad_X.data()[i], fd_X.data()[i], 1e-7 * std::max(1.0, std::abs(fd_X.data()[i])))
          << "X[" << i << "], batch " << batch;
    }
    // Relative error of the whole vectors, the number a reader compares with 1e-7.
    EXPECT_LT((grad_theta - fd_theta).norm(), 1e-7 * fd_theta.norm()) << "batch " << batch;
    EXPECT_LT((grad_X - fd_X).norm(), 1e-7 * fd_X.norm()) << "batch " << batch;
  }
}

TEST_P(EveryActivation, VjpIsTheTransposeOfTheJvp) {
  // Dot-product test: ⟨V, J·(dX, dθ)⟩ = ⟨Jᵀ V, (dX, dθ)⟩, with the JVP J·(dX, dθ) taken by
  // central differences of the forward map along the direction (dX, dθ).
  const Mlp mlp({4, 7, 7, 3}, GetParam(), Activation::tanh);
  const Eigen::VectorXd theta = generic_parameters(mlp, 9);
  const Index batch = 5;
  const Eigen::MatrixXd X = sample_matrix(4, batch, 1.1), V = sample_matrix(3, batch, 0.9, 2.0);
  const Eigen::MatrixXd dX = sample_matrix(4, batch, 1.0, 0.5);
  Eigen::VectorXd dtheta(mlp.parameter_size());
  for (Index i = 0; i < dtheta.size(); ++i)
    dtheta[i] = std::cos(0.37 * static_cast<double>(i) + 0.1);

  const double h = 1e-6;
  const Eigen::MatrixXd jvp = (forward(mlp, theta + h * dtheta, X + h * dX) -
                               forward(mlp, theta - h * dtheta, X - h * dX)) /
                              (2 * h);
  const double left = (V.array() * jvp.array()).sum();

  auto ws = mlp.make_workspace(batch);
  Eigen::MatrixXd grad_X(4, batch);
  Eigen::VectorXd grad_theta(mlp.parameter_size());
  mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);
  const double right = (grad_X.array() * dX.array()).sum() + grad_theta.dot(dtheta);
  EXPECT_NEAR(left, right, 1e-8 * std::max(1.0, std::abs(right)))
      << "⟨V, J d⟩ = " << left << ", ⟨Jᵀ V, d⟩ = " << right << ", relative difference "
      << std::abs(left - right) / std::abs(right);
}

TEST_P(EveryActivation, BatchGradientIsTheSumOfSampleGradients) {
  const Mlp mlp({2, 7, 2}, GetParam());
  const Eigen::VectorXd theta = generic_parameters(mlp, 8);
  const Index batch = 5;
  const Eigen::MatrixXd X = sample_matrix(2, batch, 1.7), V = sample_matrix(2, batch, -0.6);
  auto ws = mlp.make_workspace(batch);
  Eigen::MatrixXd grad_X(2, batch), g1(2, 1);
  Eigen::VectorXd grad_theta(mlp.parameter_size()),
      sum = Eigen::VectorXd::Zero(mlp.parameter_size()), one(mlp.parameter_size());
  mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);
  for (Index b = 0; b < batch; ++b) {
    // The same workspace, used for a smaller batch: only its leading columns.
    mlp.vjp(theta.data(), X.col(b), V.col(b), g1, one.data(), ws);
    sum += one;
    EXPECT_LT((g1 - grad_X.col(b)).norm(), 1e-15 * (1.0 + g1.norm())) << "sample " << b;
  }
  // Summation order differs (one matrix product against five), so equal to round-off.
  EXPECT_LT((sum - grad_theta).norm(), 1e-14 * (1.0 + sum.norm()));
  // The forward pass likewise: a batch is its samples side by side.
  const Eigen::MatrixXd Y = forward(mlp, theta, X);
  for (Index b = 0; b < batch; ++b)
    EXPECT_LT((forward(mlp, theta, X.col(b)) - Y.col(b)).norm(), 1e-15 * (1.0 + Y.col(b).norm()));
}

TEST_P(EveryActivation, SameInputsGiveTheSameBitsEveryCall) {
  const Mlp mlp({3, 16, 16, 3}, GetParam(), GetParam());
  const Eigen::VectorXd theta = generic_parameters(mlp, 3);
  const Eigen::MatrixXd X = sample_matrix(3, 12, 1.4), V = sample_matrix(3, 12, 0.7, 0.9);
  auto ws = mlp.make_workspace(12);
  Eigen::MatrixXd Y1(3, 12), Y2(3, 12), gX1(3, 12), gX2(3, 12);
  Eigen::VectorXd gt1(mlp.parameter_size()), gt2(mlp.parameter_size());
  mlp.forward(theta.data(), X, Y1, ws);
  mlp.vjp(theta.data(), X, V, gX1, gt1.data(), ws);
  // Other work in between, in the same workspace: nothing carries over from call to call.
  Eigen::MatrixXd other(3, 7), other_g(3, 7);
  Eigen::VectorXd other_gt(mlp.parameter_size());
  mlp.vjp(theta.data(), sample_matrix(3, 7, -2.0), sample_matrix(3, 7, 3.0), other_g,
          other_gt.data(), ws);
  mlp.forward(theta.data(), sample_matrix(3, 7, 5.0), other, ws);
  gX2.setConstant(
      std::numeric_limits<double>::quiet_NaN());  // outputs are overwritten, not accumulated
  gt2.setConstant(std::numeric_limits<double>::quiet_NaN());
  mlp.vjp(theta.data(), X, V, gX2, gt2.data(), ws);
  mlp.forward(theta.data(), X, Y2, ws);
  EXPECT_TRUE(same_bits(Y1, Y2));
  EXPECT_TRUE(same_bits(gX1, gX2));
  EXPECT_TRUE(same_bits(gt1, gt2));
  // A fresh, larger workspace gives the same bits too.
  auto big = mlp.make_workspace(40);
  mlp.vjp(theta.data(), X, V, gX2, gt2.data(), big);
  EXPECT_TRUE(same_bits(gX1, gX2));
  EXPECT_TRUE(same_bits(gt1, gt2));
}

// σ'(x) from multiply_by_derivative against central differences of apply_activation, over a
// range of points that avoids relu's kink at 0.
TEST_P(EveryActivation, DerivativeMatchesCentralDifferences) {
  const Activation a = GetParam();
  const Index n = 161;
  Eigen::MatrixXd x(1, n), y(1, n), plus(1, n), minus(1, n), yp(1, n), ym(1, n);
  for (Index i = 0; i < n; ++i)
    x(0, i) = -8.0 + 16.0 * (static_cast<double>(i) + 0.31) / static_cast<double>(n);
  rwd::nn::apply_activation(a, x, y);
  Eigen::MatrixXd derivative = Eigen::MatrixXd::Ones(1, n);
  rwd::nn::multiply_by_derivative(a, x, y, derivative);
  const double h = 1e-5;
  plus = x.array() + h;
  minus = x.array() - h;
  rwd::nn::apply_activation(a, plus, yp);
  rwd::nn::apply_activation(a, minus, ym);
  for (Index i = 0; i < n; ++i) {
    // Divided by the step actually taken (plus − minus is exact), not by the 2h intended.
    const double fd = (yp(0, i) - ym(0, i)) / (plus(0, i) - minus(0, i));
    EXPECT_NEAR(derivative(0, i), fd, 1e-9) << to_string(a) << "'(" << x(0, i) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Mlp, EveryActivation, ::testing::ValuesIn(kEveryActivation),
                         [](const auto& info) {
                           return std::string(rwd::nn::to_string(info.param));
                         });

TEST(Mlp, MixedActivationsVjpMatchesCentralDifferences) {
  // Every activation in one network, in the DenseLayerShape form.
  const Mlp mlp(std::vector<DenseLayerShape>{{3, 5, Activation::gelu},
                                             {5, 4, Activation::softplus},
                                             {4, 6, Activation::relu},
                                             {6, 4, Activation::tanh},
                                             {4, 2, Activation::identity}});
  const Eigen::VectorXd theta = generic_parameters(mlp, 21);
  const Eigen::MatrixXd X = sample_matrix(3, 3, 1.2), V = sample_matrix(2, 3, 1.0, 0.4);
  auto ws = mlp.make_workspace(3);
  Eigen::MatrixXd grad_X(3, 3);
  Eigen::VectorXd grad_theta(mlp.parameter_size()), fd(mlp.parameter_size());
  mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);
  const double h = 1e-6;
  for (Index j = 0; j < mlp.parameter_size(); ++j) {
    Eigen::VectorXd plus = theta, minus = theta;
    plus[j] += h;
    minus[j] -= h;
    fd[j] = (pairing(mlp, plus, X, V) - pairing(mlp, minus, X, V)) / (2 * h);
  }
  EXPECT_LT((grad_theta - fd).norm(), 1e-7 * fd.norm());
  EXPECT_EQ(mlp.describe(), "3-5-4-6-4-2 gelu,softplus,relu,tanh");
}

TEST(Mlp, EmptyBatchIsAllowedAndZeroesTheParameterGradient) {
  const Mlp mlp({2, 4, 2}, Activation::tanh);
  const Eigen::VectorXd theta = mlp.initial_parameters(1);
  auto ws = mlp.make_workspace(3);
  Eigen::MatrixXd X(2, 0), Y(2, 0), V(2, 0), grad_X(2, 0);
  Eigen::VectorXd grad_theta = Eigen::VectorXd::Constant(mlp.parameter_size(), 7.0);
  mlp.forward(theta.data(), X, Y, ws);
  mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);
  EXPECT_TRUE((grad_theta.array() == 0.0).all());
}

TEST(Mlp, FlatStateVectorIsAColumnMajorBatch) {
  // B samples of dimension D one after another are Map<MatrixXd>(data, D, B): sample b is
  // column b, and the network sees exactly that sample.
  const Mlp mlp({3, 8, 3}, Activation::softplus);
  const Eigen::VectorXd theta = mlp.initial_parameters(2);
  Eigen::VectorXd state(3 * 4), out(3 * 4);
  for (Index i = 0; i < state.size(); ++i) state[i] = 0.3 * static_cast<double>(i) - 1.0;
  auto ws = mlp.make_workspace(4);
  mlp.forward(theta.data(), Eigen::Map<const Eigen::MatrixXd>(state.data(), 3, 4),
              Eigen::Map<Eigen::MatrixXd>(out.data(), 3, 4), ws);
  for (Index b = 0; b < 4; ++b) {
    const Eigen::MatrixXd sample = state.segment(3 * b, 3);
    EXPECT_LT((forward(mlp, theta, sample) - out.segment(3 * b, 3)).norm(), 1e-15)
        << "sample " << b;
  }
}

TEST(Mlp, ParameterLayoutIsWeightsColumnMajorThenBias) {
  // y = W x + b for one identity layer, with θ = (W column-major, b).
  const Mlp mlp({2, 3}, Activation::identity);
  ASSERT_EQ(mlp.parameter_size(), 9);
  Eigen::VectorXd theta(9);
  theta << 1, 2, 3, 4, 5, 6, 10, 20, 30;  // W = [[1 4], [2 5], [3 6]], b = (10, 20, 30)
  Eigen::MatrixXd x(2, 1);
  x << 1.0, 100.0;
  const Eigen::MatrixXd y = forward(mlp, theta, x);
  EXPECT_EQ(y(0, 0), 1 + 400 + 10);
  EXPECT_EQ(y(1, 0), 2 + 500 + 20);
  EXPECT_EQ(y(2, 0), 3 + 600 + 30);
  const Mlp deep({2, 5, 3, 1}, Activation::tanh);
  EXPECT_EQ(deep.parameter_size(), (2 * 5 + 5) + (5 * 3 + 3) + (3 * 1 + 1));
  EXPECT_EQ(deep.parameter_offset(0), 0);
  EXPECT_EQ(deep.parameter_offset(1), 15);
  EXPECT_EQ(deep.parameter_offset(2), 33);
}

TEST(Mlp, StandardLibraryGeneratorIsTheStandardOne) {
  // The C++ standard fixes the 10000th output of a default-constructed std::mt19937_64
  // ([rand.predef]); initial_parameters' determinism across platforms rests on it.
  std::mt19937_64 generator;
  generator.discard(9999);
  EXPECT_EQ(generator(), 9981545732273789042ULL);
}

TEST(Mlp, InitialParametersAreTheSameOnEveryPlatform) {
  const Mlp mlp({2, 50, 2}, Activation::tanh);
  const Eigen::VectorXd a = mlp.initial_parameters(1), b = mlp.initial_parameters(1),
                        c = mlp.initial_parameters(42);
  ASSERT_EQ(a.size(), 252);
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_FALSE(same_bits(a, c));
  // Computed once from std::mt19937_64 and the documented conversion; exact hexadecimal
  // literals, so any platform or library that draws differently fails here.
  EXPECT_EQ(a[0], -0x1.fd671e866f074p-3);
  EXPECT_EQ(a[1], -0x1.f9e1d5c86f5aep-3);
  EXPECT_EQ(a[2], -0x1.0f81cbdafcde2p-5);
  EXPECT_EQ(a[3], -0x1.4d35a5a32f34p-2);
  EXPECT_EQ(a[150], 0x1.8341d92ba8a66p-4) << "the output layer's first weight is draw 100";
  EXPECT_EQ(c[0], 0x1.6302348fb29adp-3);
  EXPECT_EQ(c[1], 0x1.82e1648e60606p-4);
  EXPECT_EQ(c[2], 0x1.5ed1f977d20b6p-3);
  EXPECT_EQ(c[3], -0x1.fa11b0778dd34p-3);
  // Glorot & Bengio (2010): U(−a, a), a = √(6 / (in + out)); zero biases.
  const double limit = std::sqrt(6.0 / 52.0);
  EXPECT_TRUE((a.segment(100, 50).array() == 0.0).all()) << "hidden biases start at zero";
  EXPECT_TRUE((a.tail(2).array() == 0.0).all()) << "output biases start at zero";
  EXPECT_LE(a.head(100).cwiseAbs().maxCoeff(), limit);
  EXPECT_LE(a.segment(150, 100).cwiseAbs().maxCoeff(), limit);
  // Roughly uniform: the mean near 0 and the variance near a²/3.
  const Eigen::VectorXd w = a.head(100);
  EXPECT_NEAR(w.mean(), 0.0, 0.1 * limit);
  EXPECT_NEAR(w.squaredNorm() / 100.0, limit * limit / 3.0, 0.3 * limit * limit / 3.0);
}

TEST(Mlp, DescribesItself) {
  EXPECT_EQ(Mlp({2, 50, 2}, Activation::tanh).describe(), "2-50-2 tanh");
  EXPECT_EQ(Mlp({3, 8, 8, 1}, Activation::relu, Activation::softplus).describe(),
            "3-8-8-1 relu, output softplus");
  EXPECT_EQ(Mlp({2, 2}, Activation::identity).describe(), "2-2");
  EXPECT_EQ(Mlp({2, 2}, Activation::identity, Activation::gelu).describe(), "2-2, output gelu");
  const Mlp mlp({4, 9, 3}, Activation::gelu);
  EXPECT_EQ(mlp.input_size(), 4);
  EXPECT_EQ(mlp.output_size(), 3);
  ASSERT_EQ(mlp.layers().size(), 2u);
  EXPECT_EQ(mlp.layers()[0], (DenseLayerShape{4, 9, Activation::gelu}));
  EXPECT_EQ(mlp.layers()[1], (DenseLayerShape{9, 3, Activation::identity}));
}

// The message of the rwd::InvalidArgument that `call` throws (a test failure if it throws nothing
// or something else).
template <class Call>
std::string invalid_argument_message(Call call) {
  return rwd::testing::error_message<rwd::InvalidArgument>(call);
}

using rwd::testing::expect_message;

TEST(Mlp, RefusesBadArchitectures) {
  EXPECT_THROW(Mlp({3}, Activation::tanh), rwd::InvalidArgument);
  EXPECT_THROW(Mlp({}, Activation::tanh), rwd::InvalidArgument);
  EXPECT_THROW(Mlp({3, 0, 2}, Activation::tanh), rwd::InvalidArgument);
  EXPECT_THROW(Mlp({3, -1, 2}, Activation::tanh), rwd::InvalidArgument);
  EXPECT_THROW(Mlp(std::vector<DenseLayerShape>{}), rwd::InvalidArgument);
  expect_message(
      invalid_argument_message([] {
        Mlp(std::vector<DenseLayerShape>{{2, 4, Activation::tanh}, {5, 2, Activation::identity}});
      }),
      "layer 0 has 4 outputs but layer 1 takes 5 inputs");
  EXPECT_THROW(Mlp(std::vector<DenseLayerShape>{{2, 2, static_cast<Activation>(99)}}),
               rwd::InvalidArgument);
}

TEST(Mlp, RefusesWrongShapesBeforeAnyWork) {
  const Mlp mlp({2, 4, 3}, Activation::tanh);
  const Eigen::VectorXd theta = mlp.initial_parameters(1);
  auto ws = mlp.make_workspace(3);
  const Eigen::MatrixXd X = Eigen::MatrixXd::Zero(2, 3), V = Eigen::MatrixXd::Zero(3, 3);
  Eigen::MatrixXd Y(3, 3), grad_X(2, 3);
  Eigen::VectorXd grad_theta(mlp.parameter_size());
  const Eigen::MatrixXd wrong_rows = Eigen::MatrixXd::Zero(5, 3),
                        too_many = Eigen::MatrixXd::Zero(2, 4);
  Eigen::MatrixXd Y4(3, 4), Y_wrong(2, 3), Y_cols(3, 2), grad_X_wrong(3, 3), V_wrong(3, 2);

  expect_message(invalid_argument_message([&] { mlp.forward(theta.data(), wrong_rows, Y, ws); }),
                 "input X has 5 rows but must have 2");
  expect_message(invalid_argument_message([&] { mlp.forward(theta.data(), too_many, Y4, ws); }),
                 "batch of 4 samples exceeds the workspace's max_batch 3");
  expect_message(invalid_argument_message([&] { mlp.forward(theta.data(), X, Y_wrong, ws); }),
                 "output Y is 2 × 3 but must be 3 × 3");
  EXPECT_THROW(mlp.forward(theta.data(), X, Y_cols, ws), rwd::InvalidArgument);
  EXPECT_THROW(mlp.forward(nullptr, X, Y, ws), rwd::InvalidArgument);

  expect_message(invalid_argument_message(
                     [&] { mlp.vjp(theta.data(), X, V_wrong, grad_X, grad_theta.data(), ws); }),
                 "cotangent V is 3 × 2 but must be 3 × 3");
  expect_message(invalid_argument_message(
                     [&] { mlp.vjp(theta.data(), X, V, grad_X_wrong, grad_theta.data(), ws); }),
                 "grad_X is 3 × 3 but must be 2 × 3");
  EXPECT_THROW(mlp.vjp(theta.data(), wrong_rows, V, grad_X, grad_theta.data(), ws),
               rwd::InvalidArgument);
  EXPECT_THROW(mlp.vjp(theta.data(), too_many, V, grad_X, grad_theta.data(), ws),
               rwd::InvalidArgument);
  EXPECT_THROW(mlp.vjp(theta.data(), X, V, grad_X, nullptr, ws), rwd::InvalidArgument);

  // A workspace made for another network.
  const Mlp other({2, 5, 3}, Activation::tanh);
  auto other_ws = other.make_workspace(3);
  expect_message(invalid_argument_message([&] { mlp.forward(theta.data(), X, Y, other_ws); }),
                 "workspace was made for a network with other layer widths");
  Mlp::Workspace empty;
  EXPECT_THROW(mlp.forward(theta.data(), X, Y, empty), rwd::InvalidArgument);
  EXPECT_THROW(mlp.make_workspace(0), rwd::InvalidArgument);
  EXPECT_THROW(mlp.make_workspace(-2), rwd::InvalidArgument);
  // The messages name the network.
  expect_message(invalid_argument_message([&] { mlp.forward(theta.data(), wrong_rows, Y, ws); }),
                 "2-4-3 tanh");
}

TEST(Activation, NamesRoundTripAndUnknownNamesAreRefused) {
  for (Activation a : kEveryActivation)
    EXPECT_EQ(rwd::nn::parse_activation(rwd::nn::to_string(a)), a);
  EXPECT_EQ(rwd::nn::parse_activation("linear"), Activation::identity);
  const std::string message =
      invalid_argument_message([] { rwd::nn::parse_activation("sigmoidish"); });
  expect_message(message, "unknown activation 'sigmoidish'");
  expect_message(message, "identity, tanh, relu, softplus, gelu");
  EXPECT_THROW(rwd::nn::parse_activation(""), rwd::InvalidArgument);
  EXPECT_THROW(rwd::nn::parse_activation("Tanh"), rwd::InvalidArgument);
}

TEST(Activation, KnownValuesAndNoOverflow) {
  Eigen::MatrixXd x(1, 7), y(1, 7);
  x << -800.0, -1.0, 0.0, 1.0, 800.0, -40.0, 1e-300;
  const auto values = [&](Activation a) {
    rwd::nn::apply_activation(a, x, y);
    return Eigen::MatrixXd(y);
  };
  const auto derivatives = [&](Activation a) {
    rwd::nn::apply_activation(a, x, y);
    Eigen::MatrixXd d = Eigen::MatrixXd::Ones(1, 7);
    rwd::nn::multiply_by_derivative(a, x, y, d);
    return d;
  };
  // GELU (Hendrycks & Gimpel 2016): x Φ(x); Φ(1) = 0.841344746068542948…
  Eigen::MatrixXd g = values(Activation::gelu);
  EXPECT_NEAR(g(0, 3), 0.8413447460685429, 4e-16);
  EXPECT_NEAR(g(0, 1), -0.15865525393145705, 1e-16);
  EXPECT_EQ(g(0, 2), 0.0);
  EXPECT_EQ(g(0, 4), 800.0);
  EXPECT_EQ(g(0, 0), -0.0);
  // d/dx x Φ(x) at 1: Φ(1) + φ(1) = 0.841344746068543 + 0.241970724519143.
  EXPECT_NEAR(derivatives(Activation::gelu)(0, 3), 0.8413447460685429 + 0.24197072451914337, 1e-15);
  EXPECT_EQ(derivatives(Activation::gelu)(0, 2), 0.5);
  // softplus: log 2 at 0, exact at ±800 where e^x overflows or underflows; logistic slope.
  Eigen::MatrixXd s = values(Activation::softplus);
  EXPECT_DOUBLE_EQ(s(0, 2), std::log(2.0));
  EXPECT_EQ(s(0, 4), 800.0);
  EXPECT_EQ(s(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(s(0, 6), std::log(2.0));
  Eigen::MatrixXd ds = derivatives(Activation::softplus);
  EXPECT_EQ(ds(0, 2), 0.5);
  EXPECT_EQ(ds(0, 4), 1.0);
  EXPECT_EQ(ds(0, 0), 0.0);
  EXPECT_TRUE(ds.allFinite());
  // relu and its derivative (0 at the kink, by convention).
  Eigen::MatrixXd r = values(Activation::relu), dr = derivatives(Activation::relu);
  EXPECT_EQ(r(0, 1), 0.0);
  EXPECT_EQ(r(0, 3), 1.0);
  EXPECT_EQ(dr(0, 2), 0.0);
  EXPECT_EQ(dr(0, 3), 1.0);
  EXPECT_EQ(dr(0, 1), 0.0);
  // tanh saturates to exactly ±1 with a zero slope, never NaN.
  Eigen::MatrixXd t = values(Activation::tanh), dt = derivatives(Activation::tanh);
  EXPECT_EQ(t(0, 4), 1.0);
  EXPECT_EQ(t(0, 0), -1.0);
  EXPECT_EQ(t(0, 6), 1e-300);
  EXPECT_EQ(dt(0, 4), 0.0);
  EXPECT_EQ(dt(0, 2), 1.0);
  for (Activation a : kEveryActivation)
    EXPECT_TRUE(values(a).allFinite() && derivatives(a).allFinite()) << to_string(a);
}

TEST(Activation, VectorisedTanhIsWithinAFewUlpOfStdTanh) {
  Eigen::MatrixXd x(1, 20001), y(1, 20001);
  for (Index i = 0; i < x.cols(); ++i) x(0, i) = -25.0 + 50.0 * static_cast<double>(i) / 20000.0;
  x(0, 10000) = 0.0;
  x(0, 1) = 1e-300;
  x(0, 2) = -3e-9;
  x(0, 3) = 0.125;
  x(0, 4) = std::nextafter(0.125, 0.0);
  x(0, 5) = -0.125;
  rwd::nn::apply_activation(Activation::tanh, x, y);
  double worst = 0.0;
  for (Index i = 0; i < x.cols(); ++i) {
    const double exact = std::tanh(x(0, i));
    const double ulp = std::abs(std::nextafter(exact, 2.0) - exact);
    worst = std::max(worst, std::abs(y(0, i) - exact) /
                                (exact == 0.0 ? std::numeric_limits<double>::denorm_min() : ulp));
    EXPECT_EQ(std::signbit(y(0, i)), std::signbit(exact)) << "tanh is odd: x = " << x(0, i);
  }
  EXPECT_LE(worst, 8.0) << "worst error in ulp";
  EXPECT_EQ(y(0, 10000), 0.0);
}

TEST(Activation, TanhIsAccurateWhereItsFormsMeetAndKeepsSpecialValues) {
  // Dense where 2|x| crosses multiples of ln 2 / 2 (the exponent k of the range reduction
  // changes, and 2^k (e^r − 1) + (2^k − 1) cancels most for r < 0) and at tiny |x|, where
  // e = expm1(2|x|) must keep its relative precision; every column length so that both the
  // four-lane loop and the one-lane tail see every value.
  std::vector<double> points;
  for (int i = 1; i <= 40000; ++i) points.push_back(1.5 * i / 40000.0);
  for (int e = -1070; e <= 0; e += 3) points.push_back(std::ldexp(1.2345, e));
  for (double v :
       {std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
        0.17328679513998632, 0.34657359027997264, 0.5198603854199589, 19.99, 20.0, 20.01, 355.0})
    points.push_back(v);
  for (Index lanes : {1, 3, 4, 5}) {
    Eigen::MatrixXd x(lanes, static_cast<Index>(points.size()));
    for (Index j = 0; j < x.cols(); ++j)
      for (Index i = 0; i < lanes; ++i)
        x(i, j) = (i % 2 == 0 ? 1.0 : -1.0) * points[static_cast<std::size_t>(j)];
    Eigen::MatrixXd y(x.rows(), x.cols());
    rwd::nn::apply_activation(Activation::tanh, x, y);
    double worst = 0.0;
    for (Index k = 0; k < x.size(); ++k) {
      const double exact = std::tanh(x(k));
      const double ulp = std::abs(std::nextafter(exact, 2.0 * exact) - exact);
      worst = std::max(worst, std::abs(y(k) - exact) / ulp);
    }
    EXPECT_LE(worst, 4.0) << "worst error in ulp, columns of " << lanes;
  }
  // NaN stays NaN, −0 stays −0, ±∞ saturate, in the four-lane loop and in the tail.
  Eigen::MatrixXd special(1, 6), out(1, 6);
  special << std::numeric_limits<double>::quiet_NaN(), -0.0,
      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), -0.0,
      std::numeric_limits<double>::quiet_NaN();
  rwd::nn::apply_activation(Activation::tanh, special, out);
  EXPECT_TRUE(std::isnan(out(0, 0)) && std::isnan(out(0, 5)));
  EXPECT_TRUE(out(0, 1) == 0.0 && std::signbit(out(0, 1)));
  EXPECT_TRUE(out(0, 4) == 0.0 && std::signbit(out(0, 4)));
  EXPECT_EQ(out(0, 2), 1.0);
  EXPECT_EQ(out(0, 3), -1.0);
}

TEST(Mlp, EverySampleHasTheSameBitsInAnyBatch) {
  // What splitting a minibatch across processes rests on: a sample's forward output, input
  // cotangent and per-sample parameter gradient do not depend on the batch size or on the
  // sample's place in the batch — for odd widths (SIMD tails), a single column (where Eigen's
  // product would switch to a matrix-vector kernel) and every activation. And the per-sample
  // gradients add up to vjp's summed one.
  const std::vector<std::vector<Index>> shapes = {{2, 50, 2}, {2, 7, 2}, {3, 13, 5, 3}, {1, 1}};
  for (const auto& widths : shapes)
    for (Activation act :
         {Activation::tanh, Activation::relu, Activation::softplus, Activation::gelu}) {
      const Mlp mlp(widths, act);
      const Index d = mlp.input_size(), o = mlp.output_size(), p = mlp.parameter_size();
      const Eigen::VectorXd theta = mlp.initial_parameters(3);
      const Index n = 11;
      std::mt19937_64 generator(5);
      std::uniform_real_distribution<double> uniform(-1.5, 1.5);
      Eigen::MatrixXd X(d, n), V(o, n);
      for (Index i = 0; i < X.size(); ++i) X(i) = uniform(generator);
      for (Index i = 0; i < V.size(); ++i) V(i) = uniform(generator);
      auto ws = mlp.make_workspace(n);
      Eigen::MatrixXd Y_all(o, n), gX_all(d, n), gT_all(p, n);
      mlp.forward(theta.data(), X, Y_all, ws);
      mlp.vjp_per_sample(theta.data(), X, V, gX_all, gT_all, ws);
      const auto same = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
        return std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
      };
      for (Index k = 1; k <= n; ++k)
        for (Index first = 0; first + k <= n; ++first) {
          const Eigen::MatrixXd Xk = X.middleCols(first, k), Vk = V.middleCols(first, k);
          Eigen::MatrixXd Y(o, k), gX(d, k), gT(p, k);
          mlp.forward(theta.data(), Xk, Y, ws);
          mlp.vjp_per_sample(theta.data(), Xk, Vk, gX, gT, ws);
          const std::string where = mlp.describe() + ", samples " + std::to_string(first) + " to " +
                                    std::to_string(first + k - 1);
          ASSERT_TRUE(same(Y, Y_all.middleCols(first, k))) << where << ": forward";
          ASSERT_TRUE(same(gX, gX_all.middleCols(first, k))) << where << ": grad_X";
          ASSERT_TRUE(same(gT, gT_all.middleCols(first, k))) << where << ": grad_theta";
        }
      Eigen::VectorXd summed(p);
      mlp.vjp(theta.data(), X, V, gX_all, summed.data(), ws);
      EXPECT_LE((summed - gT_all.rowwise().sum()).norm(), 1e-14 * summed.norm()) << mlp.describe();
    }
}

}  // namespace
