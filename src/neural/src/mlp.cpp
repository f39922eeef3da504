// src/neural/src/mlp.cpp — see rewind/neural/mlp.hpp.
#include "rewind/neural/mlp.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "dense_kernels.hpp"
#include "rewind/error.hpp"

namespace rwd::nn {
namespace {

using ConstMatrixMap = Eigen::Map<const Eigen::MatrixXd>;
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

// Rows of every work matrix, rounded up to a multiple of the SIMD width Eigen vectorises doubles
// with in this build (2 with SSE2, 4 with AVX, 8 with AVX-512). A column then holds whole vectors
// and starts on a vector boundary, so an elementwise function that Eigen vectorises with a packet
// algorithm different from its scalar one (exp, where a version vectorises the tanh expression)
// treats every value alike — no value falls into a scalar tail whose position would depend on
// the batch size. (Eigen 3.4 evaluates the tanh expression, a select, scalar by scalar; the
// padding keeps the guarantee where it does not.)
Index padded(Index rows) {
  constexpr Index width = Eigen::internal::packet_traits<double>::size;
  return (rows + width - 1) / width * width;
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
    // Widths read from a file may be anything: the count must fit 64 bits (UBSan found
    // 8864812498944 x 2251851354013699 from a fuzzed parameter file).
    constexpr Index kMax = std::numeric_limits<Index>::max();
    if (l.inputs > kMax / l.outputs - 1 || l.outputs * (l.inputs + 1) > kMax - parameter_size_)
      detail::fail<InvalidArgument>("MLP layer ", i, " is ", l.inputs, " → ", l.outputs,
                                    ": the network's parameter count overflows 64 bits");
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

Mlp::Workspace Mlp::make_workspace(Index max_batch, Index saved_passes,
                                   Index deferred_calls) const {
  if (max_batch < 1)
    detail::fail<InvalidArgument>("MLP workspace: max_batch = ", max_batch, " must be >= 1");
  if (saved_passes < 0)
    detail::fail<InvalidArgument>("MLP workspace: saved_passes = ", saved_passes, " must be >= 0");
  if (deferred_calls < 0 || deferred_calls > static_cast<Index>(kMaxDeferred))
    detail::fail<InvalidArgument>("MLP workspace: deferred_calls = ", deferred_calls,
                                  " must be in [0, ", kMaxDeferred, "]");
  Workspace ws;
  ws.max_batch_ = max_batch;
  // Zeros: the padding rows are never written by a product, and stay finite through tanh.
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    ws.pre.push_back(Eigen::MatrixXd::Zero(padded(layers_[i].outputs), max_batch));
    ws.post.push_back(Eigen::MatrixXd::Zero(padded(layers_[i].outputs), max_batch));
  }
  ws.grad_a = Eigen::MatrixXd::Zero(padded(widest_), max_batch);
  ws.grad_b = Eigen::MatrixXd::Zero(padded(widest_), max_batch);
  ws.transposed.resize(parameter_size_);  // layer k's Wᵀ where θ has its W (bias slots unused)
  ws.theta_key.resize(parameter_size_);
  ws.made_for = layers_;
  if (saved_passes > 0) {
    ws.saved.resize(static_cast<std::size_t>(saved_passes));
    for (Workspace::SavedPass& slot : ws.saved) {
      slot.x = Eigen::MatrixXd::Zero(input_size(), max_batch);
      slot.pre = ws.pre;
      slot.post = ws.post;
    }
  }
  ws.deferred_capacity = static_cast<std::size_t>(deferred_calls);
  if (deferred_calls > 0)
    for (const DenseLayerShape& l : layers_) {
      constexpr Index kLine = 8;  // doubles per cache line
      ws.deferred_g_stride.push_back(l.outputs * max_batch + kLine);
      ws.deferred_a_stride.push_back(l.inputs * max_batch + kLine);
      ws.deferred_g.push_back(Eigen::VectorXd::Zero(deferred_calls * ws.deferred_g_stride.back()));
      ws.deferred_a.push_back(Eigen::VectorXd::Zero(deferred_calls * ws.deferred_a_stride.back()));
    }
  return ws;
}

std::uint64_t Mlp::theta_version(const double* theta, Workspace& ws) const {
  const auto bytes = static_cast<std::size_t>(parameter_size_) * sizeof(double);
  if (ws.theta_version == 0 || std::memcmp(ws.theta_key.data(), theta, bytes) != 0) {
    std::memcpy(ws.theta_key.data(), theta, bytes);
    ++ws.theta_version;
  }
  return ws.theta_version;
}

const double* Mlp::transposed_weights(const double* theta, std::uint64_t version,
                                      Workspace& ws) const {
  if (ws.transposed_version != version) {
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      const DenseLayerShape& l = layers_[k];
      MatrixMap(ws.transposed.data() + offsets_[k], l.inputs, l.outputs) =
          ConstMatrixMap(theta + offsets_[k], l.outputs, l.inputs).transpose();
    }
    ws.transposed_version = version;
  }
  return ws.transposed.data();
}

void Mlp::save_pass(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                    Workspace& ws) const {
  if (ws.saved.empty()) return;
  Workspace::SavedPass& slot = ws.saved[ws.next_slot];
  ws.next_slot = (ws.next_slot + 1) % ws.saved.size();
  slot.theta_version = theta_version(theta, ws);
  slot.x.leftCols(X.cols()) = X;
  slot.batch = X.cols();
  // The slot keeps this pass; the workspace gets the slot's old matrices (same shapes) to fill
  // next time. Swapping Eigen matrices exchanges their buffers: nothing is copied or allocated.
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    slot.pre[i].swap(ws.pre[i]);
    slot.post[i].swap(ws.post[i]);
  }
}

void Mlp::restore_or_run_forward(const double* theta, std::uint64_t version,
                                 const Eigen::Ref<const Eigen::MatrixXd>& X, Workspace& ws) const {
  const Index batch = X.cols();
  if (!ws.saved.empty()) {
    // Newest first: a reverse sweep asks for the passes in the reverse of their order.
    for (std::size_t k = 0; k < ws.saved.size(); ++k) {
      const std::size_t i = (ws.next_slot + ws.saved.size() - 1 - k) % ws.saved.size();
      Workspace::SavedPass& slot = ws.saved[i];
      if (slot.theta_version != version || slot.batch != batch) continue;
      bool same = true;
      for (Index j = 0; j < batch && same; ++j)
        same = std::memcmp(slot.x.col(j).data(), X.col(j).data(),
                           static_cast<std::size_t>(X.rows()) * sizeof(double)) == 0;
      if (!same) continue;
      for (std::size_t l = 0; l < layers_.size(); ++l) {
        slot.pre[l].swap(ws.pre[l]);
        slot.post[l].swap(ws.post[l]);
      }
      slot.theta_version = 0;  // used: its matrices are the workspace's old ones now
      return;
    }
  }
  run_forward(theta, X, batch, ws);
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
  if (ws.made_for.size() != layers_.size() ||
      !std::equal(layers_.begin(), layers_.end(), ws.made_for.begin(),
                  [](const DenseLayerShape& a, const DenseLayerShape& b) {
                    return a.inputs == b.inputs && a.outputs == b.outputs;
                  }))
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call,
                                  ": the workspace was made for a network with other layer widths");
}

void Mlp::run_forward(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X, Index batch,
                      Workspace& ws) const {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayerShape& l = layers_[i];
    const double* W = theta + offsets_[i];
    const double* b = W + l.outputs * l.inputs;
    Eigen::MatrixXd& pre = ws.pre[i];
    if (i == 0)
      dense::column_products(W, l.outputs, l.inputs, X.data(), X.outerStride(), batch, b,
                             pre.data(), pre.rows());
    else
      dense::column_products(W, l.outputs, l.inputs, ws.post[i - 1].data(), ws.post[i - 1].rows(),
                             batch, b, pre.data(), pre.rows());
    // Padding rows included: whole vectors for every column (see padded()).
    apply_activation(l.activation, pre.leftCols(batch), ws.post[i].leftCols(batch));
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
  Y = ws.post.back().topLeftCorner(output_size(), batch);
  save_pass(theta, X, ws);
}

void Mlp::check_vjp(const char* call, const double* theta,
                    const Eigen::Ref<const Eigen::MatrixXd>& X,
                    const Eigen::Ref<const Eigen::MatrixXd>& V,
                    const Eigen::Ref<Eigen::MatrixXd>& grad_X, const Workspace& ws) const {
  const Index batch = X.cols();
  check_call(call, theta, X, ws);
  if (V.rows() != output_size() || V.cols() != batch)
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": cotangent V is ", V.rows(),
                                  " × ", V.cols(), " but must be ", output_size(), " × ", batch);
  if (grad_X.rows() != input_size() || grad_X.cols() != batch)
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": grad_X is ", grad_X.rows(),
                                  " × ", grad_X.cols(), " but must be ", input_size(), " × ",
                                  batch);
}

void Mlp::vjp(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
              const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Ref<Eigen::MatrixXd> grad_X,
              double* grad_theta, Workspace& ws) const {
  check_vjp("vjp", theta, X, V, grad_X, ws);
  if (grad_theta == nullptr)
    detail::fail<InvalidArgument>("MLP ", describe(), " vjp: grad_theta is a null pointer");
  reverse_pass(theta, X, V, grad_X, ws,
               [&](std::size_t k, const auto& G, const Eigen::Ref<const Eigen::MatrixXd>& A) {
                 const DenseLayerShape& l = layers_[k];
                 MatrixMap dW(grad_theta + offsets_[k], l.outputs, l.inputs);
                 VectorMap db(grad_theta + offsets_[k] + l.outputs * l.inputs, l.outputs);
                 dW.noalias() = G * A.transpose();
                 db.noalias() = G.rowwise().sum();
               });
}

void Mlp::vjp_per_sample(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                         const Eigen::Ref<const Eigen::MatrixXd>& V,
                         Eigen::Ref<Eigen::MatrixXd> grad_X, Eigen::Ref<Eigen::MatrixXd> grad_theta,
                         Workspace& ws) const {
  per_sample<false>("vjp_per_sample", theta, X, V, grad_X, grad_theta, ws);
}

void Mlp::accumulate_vjp_per_sample(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                                    const Eigen::Ref<const Eigen::MatrixXd>& V,
                                    Eigen::Ref<Eigen::MatrixXd> grad_X,
                                    Eigen::Ref<Eigen::MatrixXd> grad_theta, Workspace& ws) const {
  if (ws.deferred_capacity == 0) {
    per_sample<true>("accumulate_vjp_per_sample", theta, X, V, grad_X, grad_theta, ws);
    return;
  }
  check_vjp("accumulate_vjp_per_sample", theta, X, V, grad_X, ws);
  if (grad_theta.rows() != parameter_size() || grad_theta.cols() != X.cols())
    detail::fail<InvalidArgument>("MLP ", describe(), " accumulate_vjp_per_sample: grad_theta is ",
                                  grad_theta.rows(), " × ", grad_theta.cols(), " but must be ",
                                  parameter_size(), " × ", X.cols(),
                                  " (one parameter gradient per sample)");
  if (ws.deferred_count > 0 &&
      (ws.deferred_target != grad_theta.data() || ws.deferred_stride != grad_theta.outerStride() ||
       ws.deferred_batch != X.cols() || ws.deferred_count == ws.deferred_capacity))
    add_deferred_vjps(ws);
  ws.deferred_target = grad_theta.data();
  ws.deferred_stride = grad_theta.outerStride();
  ws.deferred_batch = X.cols();
  const auto call = static_cast<Index>(ws.deferred_count++);
  reverse_pass(
      theta, X, V, grad_X, ws,
      [&](std::size_t k, const auto& G, const Eigen::Ref<const Eigen::MatrixXd>& A) {
        MatrixMap(ws.deferred_g[k].data() + call * ws.deferred_g_stride[k], G.rows(), G.cols()) = G;
        MatrixMap(ws.deferred_a[k].data() + call * ws.deferred_a_stride[k], A.rows(), A.cols()) = A;
      });
}

// The waiting calls' shares, added as per_sample<true> would have added them call by call: for
// each entry, call after call, one product added — only the loops are turned so that each
// sample's dW is finished (every call's term, a block of entries in registers at a time) while
// it is in cache.
void Mlp::add_deferred_vjps(Workspace& ws) const {
  const std::size_t n = ws.deferred_count;
  if (n == 0) return;
  ws.deferred_count = 0;
  for (Index s = 0; s < ws.deferred_batch; ++s) {
    double* theta_s = ws.deferred_target + s * ws.deferred_stride;
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      const Index m = layers_[k].outputs, inputs = layers_[k].inputs;
      dense::add_outer_products(n, ws.deferred_g[k].data() + s * m, ws.deferred_g_stride[k],
                                ws.deferred_a[k].data() + s * inputs, ws.deferred_a_stride[k], m,
                                inputs, theta_s + offsets_[k]);
    }
  }
}

template <bool accumulate>
void Mlp::per_sample(const char* call, const double* theta,
                     const Eigen::Ref<const Eigen::MatrixXd>& X,
                     const Eigen::Ref<const Eigen::MatrixXd>& V,
                     Eigen::Ref<Eigen::MatrixXd>& grad_X, Eigen::Ref<Eigen::MatrixXd>& grad_theta,
                     Workspace& ws) const {
  check_vjp(call, theta, X, V, grad_X, ws);
  if (grad_theta.rows() != parameter_size() || grad_theta.cols() != X.cols())
    detail::fail<InvalidArgument>("MLP ", describe(), " ", call, ": grad_theta is ",
                                  grad_theta.rows(), " × ", grad_theta.cols(), " but must be ",
                                  parameter_size(), " × ", X.cols(),
                                  " (one parameter gradient per sample)");
  reverse_pass(theta, X, V, grad_X, ws,
               [&](std::size_t k, const auto& G, const Eigen::Ref<const Eigen::MatrixXd>& A) {
                 // Sample s's share alone: dW_s = g_s a_sᵀ (each entry one product) and
                 // db_s = g_s — no sum over the batch, so nothing depends on its size.
                 const DenseLayerShape& l = layers_[k];
                 for (Index s = 0; s < G.cols(); ++s) {
                   const double* __restrict g = G.col(s).data();
                   const double* a = A.col(s).data();
                   double* __restrict dW = grad_theta.col(s).data() + offsets_[k];
                   for (Index j = 0; j < l.inputs; ++j, dW += l.outputs) {
                     const double aj = a[j];
                     if constexpr (accumulate)
                       for (Index i = 0; i < l.outputs; ++i) dW[i] += g[i] * aj;
                     else
                       for (Index i = 0; i < l.outputs; ++i) dW[i] = g[i] * aj;
                   }
                   if constexpr (accumulate)  // db follows W
                     for (Index i = 0; i < l.outputs; ++i) dW[i] += g[i];
                   else
                     for (Index i = 0; i < l.outputs; ++i) dW[i] = g[i];
                 }
               });
}

// Reverse mode by hand. With z = W a + b and a' = σ(z), a cotangent G = ∂L/∂a' becomes
// ∂L/∂z = σ'(z) ⊙ G; `parameters(k, G, a)` then takes layer k's ∂L/∂z and input a (for ∂L/∂W
// and ∂L/∂b), and ∂L/∂a = Wᵀ (∂L/∂z) goes on to the layer below. G moves between the
// workspace's two cotangent buffers as the layer index descends; the first layer's ∂L/∂a goes
// straight into grad_X. Wᵀ is kept in the workspace (made once per θ version), so that ∂L/∂a is the
// same column-by-column product as the forward pass (the same bits for any batch).
template <class ParameterGradient>
void Mlp::reverse_pass(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                       const Eigen::Ref<const Eigen::MatrixXd>& V,
                       Eigen::Ref<Eigen::MatrixXd>& grad_X, Workspace& ws,
                       ParameterGradient&& parameters) const {
  const Index batch = X.cols();
  const std::uint64_t version = theta_version(theta, ws);  // one comparison of θ per call
  restore_or_run_forward(theta, version, X, ws);
  const double* transposed = transposed_weights(theta, version, ws);
  Eigen::MatrixXd* g = &ws.grad_a;
  Eigen::MatrixXd* next = &ws.grad_b;
  g->topLeftCorner(output_size(), batch) = V;
  for (std::size_t k = layers_.size(); k-- > 0;) {
    const DenseLayerShape& l = layers_[k];
    auto G = g->topLeftCorner(l.outputs, batch);
    multiply_by_derivative(l.activation, ws.pre[k].topLeftCorner(l.outputs, batch),
                           ws.post[k].topLeftCorner(l.outputs, batch), G);  // ∂L/∂z
    if (k == 0)
      parameters(k, G, X);
    else
      parameters(k, G, ws.post[k - 1].topLeftCorner(l.inputs, batch));
    const double* Wt = transposed + offsets_[k];  // inputs × outputs
    if (k == 0) {
      dense::column_products(Wt, l.inputs, l.outputs, g->data(), g->rows(), batch, nullptr,
                             grad_X.data(), grad_X.outerStride());
    } else {
      dense::column_products(Wt, l.inputs, l.outputs, g->data(), g->rows(), batch, nullptr,
                             next->data(), next->rows());
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
