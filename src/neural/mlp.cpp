// src/neural/mlp.cpp — see rewind/neural/mlp.hpp.
#include "rewind/neural/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "rewind/error.hpp"

namespace rwd::nn {
namespace {

using ConstMatrixMap = Eigen::Map<const Eigen::MatrixXd>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXd>;
using MatrixMap = Eigen::Map<Eigen::MatrixXd>;
using VectorMap = Eigen::Map<Eigen::VectorXd>;

std::vector<DenseLayerShape> chain(const std::vector<Index>& widths, Activation hidden,
                                   Activation output) {
  if (widths.size() < 2)
    detail::fail<InvalidArgument>("an MLP needs at least an input and an output width, got ",
                                  widths.size(), " widths");
  std::vector<DenseLayerShape> layers;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i)
    layers.push_back({widths[i], widths[i + 1], i + 2 == widths.size() ? output : hidden});
  return layers;
}

}  // namespace

Mlp::Mlp(std::vector<Index> widths, Activation hidden, Activation output)
    : Mlp(chain(widths, hidden, output)) {}

Mlp::Mlp(std::vector<DenseLayerShape> layers) : layers_(std::move(layers)) {
  if (layers_.empty()) detail::fail<InvalidArgument>("an MLP needs at least one layer");
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayerShape& l = layers_[i];
    if (l.inputs < 1 || l.outputs < 1)
      detail::fail<InvalidArgument>("MLP layer ", i, " is ", l.inputs, " → ", l.outputs,
                                    "; widths must be >= 1");
    if (to_string(l.activation) == "?")
      detail::fail<InvalidArgument>("MLP layer ", i, " has an invalid activation (enum value ",
                                    static_cast<int>(l.activation), ")");
    if (i > 0 && layers_[i - 1].outputs != l.inputs)
      detail::fail<InvalidArgument>("MLP layer ", i - 1, " has ", layers_[i - 1].outputs,
                                    " outputs but layer ", i, " takes ", l.inputs, " inputs");
    offsets_.push_back(parameter_size_);
    parameter_size_ += l.outputs * l.inputs + l.outputs;
    widest_ = std::max({widest_, l.inputs, l.outputs});
  }
}

std::string Mlp::describe() const {
  std::string text = std::to_string(input_size());
  for (const DenseLayerShape& l : layers_) {
    text += '-';
    text += std::to_string(l.outputs);
  }
  // Hidden activations: one name when they agree (the usual case), else each in order.
  const std::size_t hidden = layers_.size() - 1;
  bool uniform = true;
  for (std::size_t i = 1; i < hidden; ++i)
    uniform = uniform && layers_[i].activation == layers_[0].activation;
  for (std::size_t i = 0; i < (uniform ? std::min<std::size_t>(hidden, 1) : hidden); ++i) {
    text += i == 0 ? ' ' : ',';
    text += to_string(layers_[i].activation);
  }
  if (layers_.back().activation != Activation::identity) {
    text += ", output ";
    text += to_string(layers_.back().activation);
  }
  return text;
}

Mlp::Workspace Mlp::make_workspace(Index max_batch) const {
  if (max_batch < 1)
    detail::fail<InvalidArgument>("MLP workspace: max_batch = ", max_batch, " must be >= 1");
  Workspace ws;
  ws.max_batch_ = max_batch;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    ws.pre.emplace_back(layers_[i].outputs, max_batch);
    ws.post.emplace_back(layers_[i].outputs, max_batch);
  }
  ws.grad_a.resize(widest_, max_batch);
  ws.grad_b.resize(widest_, max_batch);
  return ws;
}

// The checks every call shares: θ present, X's rows, the batch within the workspace, and a
// workspace made for this network's widths.
void Mlp::check_call(const char* call, const double* theta,
                     const Eigen::Ref<const Eigen::MatrixXd>& X, const Workspace& ws) const {
  if (theta == nullptr)
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": theta is a null pointer");
  if (X.rows() != input_size())
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": input X has ", X.rows(),
                                  " rows but must have ", input_size(), " (one sample per column)");
  if (X.cols() > ws.max_batch())
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": batch of ", X.cols(),
                                  " samples exceeds the workspace's max_batch ", ws.max_batch());
  bool same_widths = ws.pre.size() == layers_.size() && ws.grad_a.rows() == widest_;
  for (std::size_t i = 0; same_widths && i < layers_.size(); ++i)
    same_widths = ws.pre[i].rows() == layers_[i].outputs;
  if (!same_widths)
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call,
                                  ": the workspace was made for a network with other layer widths");
}

void Mlp::run_forward(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X, Index batch,
                      Workspace& ws) const {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayerShape& l = layers_[i];
    const ConstMatrixMap W(theta + offsets_[i], l.outputs, l.inputs);
    const ConstVectorMap b(theta + offsets_[i] + l.outputs * l.inputs, l.outputs);
    auto pre = ws.pre[i].leftCols(batch);
    if (i == 0)
      pre.noalias() = W * X;
    else
      pre.noalias() = W * ws.post[i - 1].leftCols(batch);
    pre.colwise() += b;
    apply_activation(l.activation, pre, ws.post[i].leftCols(batch));
  }
}

void Mlp::forward(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                  Eigen::Ref<Eigen::MatrixXd> Y, Workspace& ws) const {
  const Index batch = X.cols();
  check_call("forward", theta, X, ws);
  if (Y.rows() != output_size() || Y.cols() != batch)
    detail::fail<InvalidArgument>("MLP ", describe(), " forward: output Y is ", Y.rows(), " × ",
                                  Y.cols(), " but must be ", output_size(), " × ", batch);
  run_forward(theta, X, batch, ws);
  Y = ws.post.back().leftCols(batch);
}

void Mlp::vjp(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
              const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Ref<Eigen::MatrixXd> grad_X,
              double* grad_theta, Workspace& ws) const {
  const Index batch = X.cols();
  check_call("vjp", theta, X, ws);
  if (grad_theta == nullptr)
    detail::fail<InvalidArgument>("MLP ", describe(), " vjp: grad_theta is a null pointer");
  if (V.rows() != output_size() || V.cols() != batch)
    detail::fail<InvalidArgument>("MLP ", describe(), " vjp: cotangent V is ", V.rows(), " × ",
                                  V.cols(), " but must be ", output_size(), " × ", batch);
  if (grad_X.rows() != input_size() || grad_X.cols() != batch)
    detail::fail<InvalidArgument>("MLP ", describe(), " vjp: grad_X is ", grad_X.rows(), " × ",
                                  grad_X.cols(), " but must be ", input_size(), " × ", batch);
  run_forward(theta, X, batch, ws);

  // Reverse mode by hand. With z = W a + b and a' = σ(z), a cotangent G = ∂L/∂a' becomes
  // ∂L/∂z = σ'(z) ⊙ G, and then ∂L/∂W = (∂L/∂z) aᵀ, ∂L/∂b = (∂L/∂z) 1 (sums over the batch's
  // columns) and ∂L/∂a = Wᵀ (∂L/∂z). G moves between the workspace's two cotangent buffers as
  // the layer index descends; the first layer's ∂L/∂a goes straight into grad_X.
  Eigen::MatrixXd* g = &ws.grad_a;
  Eigen::MatrixXd* next = &ws.grad_b;
  g->topLeftCorner(output_size(), batch) = V;
  for (std::size_t k = layers_.size(); k-- > 0;) {
    const DenseLayerShape& l = layers_[k];
    auto G = g->topLeftCorner(l.outputs, batch);
    multiply_by_derivative(l.activation, ws.pre[k].leftCols(batch), ws.post[k].leftCols(batch),
                           G);  // ∂L/∂pre
    const ConstMatrixMap W(theta + offsets_[k], l.outputs, l.inputs);
    MatrixMap dW(grad_theta + offsets_[k], l.outputs, l.inputs);
    VectorMap db(grad_theta + offsets_[k] + l.outputs * l.inputs, l.outputs);
    if (k == 0)
      dW.noalias() = G * X.transpose();
    else
      dW.noalias() = G * ws.post[k - 1].leftCols(batch).transpose();
    db.noalias() = G.rowwise().sum();
    if (k == 0) {
      grad_X.noalias() = W.transpose() * G;
    } else {
      next->topLeftCorner(l.inputs, batch).noalias() = W.transpose() * G;
      std::swap(g, next);
    }
  }
}

// Glorot & Bengio (2010), "Understanding the difficulty of training deep feedforward neural
// networks", AISTATS: U(−a, a) with a = √(6 / (fan_in + fan_out)) keeps the variance of
// activations and of back-propagated gradients roughly constant from layer to layer for tanh
// networks, which is why it is the default here; biases start at zero.
//
// Bits to doubles, identically on every platform: the top 53 bits of each 64-bit output, times
// 2^−53, are exactly a double u in [0, 1); 2u − 1 is then exact too (a multiple of 2^−52 in
// [−1, 1)), and a · (2u − 1) is one correctly rounded IEEE multiplication (a itself is a
// correctly rounded division and square root). Weights are drawn in θ's order, layer by layer.
Eigen::VectorXd Mlp::initial_parameters(std::uint64_t seed) const {
  std::mt19937_64 generator(seed);
  const auto unit = [&generator] { return static_cast<double>(generator() >> 11) * 0x1.0p-53; };
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(parameter_size_);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayerShape& l = layers_[i];
    const double limit = std::sqrt(6.0 / static_cast<double>(l.inputs + l.outputs));
    for (Index j = 0; j < l.outputs * l.inputs; ++j)
      theta[offsets_[i] + j] = limit * (2.0 * unit() - 1.0);
  }
  return theta;
}

}  // namespace rwd::nn
