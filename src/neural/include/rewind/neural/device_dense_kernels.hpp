// rewind/neural/device_dense_kernels.hpp — the kernels of rwd::nn::DeviceMlp: one dense layer's
// forward pass, its exact reverse pass and the batch sum of its parameter gradient, as
// REWIND_HOST_DEVICE functors over raw pointers for ThrustBackend::for_each_index (CUDA with nvcc,
// the CPP and OMP device systems with g++). Internal; include rewind/neural/device_mlp.hpp.
//
// Layout as rwd::nn::Mlp: a batch is a column-major matrix with one sample per column; a layer's
// parameters are W (outputs × inputs, column-major) and then b (outputs).
//
// Determinism. Every output value is one fixed chain of additions that depends on the shapes
// alone: a layer product Σ_k W_ok x_kb in k order; the parameter gradient Σ_b g_ob x_kb over the
// batch in chunks of kBatchChunk columns, each chunk summed in column order (LayerPartialSums)
// and the chunks' partial sums then added in chunk order (FoldPartialSums). No atomics, and
// nothing depends on how many threads run or how a launch is configured, so the same inputs give
// the same bits on every call and every device system built by the same compiler (nvcc contracts
// a·x + y into fused multiply-adds, so CUDA's bits differ from the CPU's in the last places, as
// for every ThrustBackend kernel).
#pragma once

#include <cmath>

#include "rewind/host_device.hpp"
#include "rewind/neural/activation.hpp"
#include "rewind/types.hpp"

namespace rwd::nn::device_kernels {

// The batch columns one partial sum of the parameter gradient covers (see above).
inline constexpr Index kBatchChunk = 128;

REWIND_HOST_DEVICE inline double normal_cdf(double x) {
  return 0.5 * ::erfc(-x * 0.70710678118654752440);  // Φ(x) = ½ erfc(−x/√2)
}

REWIND_HOST_DEVICE inline double activate(Activation a, double z) {
  switch (a) {
    case Activation::tanh:
      return ::tanh(z);
    case Activation::relu:
      return z > 0.0 ? z : 0.0;
    case Activation::softplus:  // max(z, 0) + log(1 + e^{−|z|}): no overflow for large |z|
      return (z > 0.0 ? z : 0.0) + ::log1p(::exp(-::fabs(z)));
    case Activation::gelu:  // z Φ(z), the exact erf form (Hendrycks & Gimpel 2016)
      return z * normal_cdf(z);
    case Activation::identity:
      break;
  }
  return z;
}

// σ'(z) from z = pre and σ(z) = post (tanh' = 1 − tanh², the value the forward pass computed).
REWIND_HOST_DEVICE inline double derivative(Activation a, double pre, double post) {
  switch (a) {
    case Activation::tanh:
      return 1.0 - post * post;
    case Activation::relu:
      return pre > 0.0 ? 1.0 : 0.0;
    case Activation::softplus: {  // the logistic function, on the side where exp cannot overflow
      if (pre >= 0.0) return 1.0 / (1.0 + ::exp(-pre));
      const double e = ::exp(pre);
      return e / (1.0 + e);
    }
    case Activation::gelu:  // Φ(z) + z φ(z)
      return normal_cdf(pre) + pre * 0.39894228040143267794 * ::exp(-0.5 * pre * pre);
    case Activation::identity:
      break;
  }
  return 1.0;
}

// One layer forward, index i = o + outputs·col over outputs × batch:
//   z = Σ_k W_ok x_k,col (k in order) + b_o;  pre_i = z (when pre is not null);  post_i = σ(z).
struct LayerForward {
  const double* W;
  const double* b;
  const double* x;
  double* pre;
  double* post;
  Index outputs, inputs;
  Activation activation;

  REWIND_HOST_DEVICE void operator()(Index i) const {
    const Index o = i % outputs;
    const double* xc = x + (i / outputs) * inputs;
    double z = 0.0;
    for (Index k = 0; k < inputs; ++k) z += W[o + k * outputs] * xc[k];
    z += b[o];
    if (pre) pre[i] = z;
    post[i] = activate(activation, z);
  }
};

// g_i ⊙= σ'(pre_i): ∂L/∂(activation output) into ∂L/∂(pre-activation), over outputs × batch.
struct ActivationCotangent {
  const double* pre;
  const double* post;
  double* g;
  Activation activation;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    g[i] = g[i] * derivative(activation, pre[i], post[i]);
  }
};

// The input cotangent, index i = k + inputs·col over inputs × batch:  g_in_i = Σ_o W_ok g_o,col.
struct InputCotangent {
  const double* W;
  const double* g;
  double* g_in;
  Index outputs, inputs;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    const Index k = i % inputs;
    const double* gc = g + (i / inputs) * outputs;
    const double* Wk = W + k * outputs;
    double s = 0.0;
    for (Index o = 0; o < outputs; ++o) s += Wk[o] * gc[o];
    g_in[i] = s;
  }
};

// The parameter gradient's chunk sums, index i = e + entries·c over entries × chunks, with
// entries = outputs·inputs + outputs in θ's order (W column-major, then b): over the columns of
// chunk c in order, Σ g_o,col x_k,col for W's entry e = o + outputs·k, Σ g_o,col for b's.
struct LayerPartialSums {
  const double* g;
  const double* x;
  double* partials;
  Index outputs, inputs, batch;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    const Index entries = outputs * inputs + outputs;
    const Index e = i % entries, c = i / entries;
    const Index first = c * kBatchChunk;
    const Index last = first + kBatchChunk < batch ? first + kBatchChunk : batch;
    double s = 0.0;
    if (e < outputs * inputs) {
      const Index o = e % outputs, k = e / outputs;
      for (Index col = first; col < last; ++col) s += g[o + col * outputs] * x[k + col * inputs];
    } else {
      const Index o = e - outputs * inputs;
      for (Index col = first; col < last; ++col) s += g[o + col * outputs];
    }
    partials[i] = s;
  }
};

// The chunks' partial sums added in chunk order, into target (accumulate: target_e + sum, the
// bits of writing the sum and then adding it) or over it.
struct FoldPartialSums {
  const double* partials;
  double* target;
  Index entries, chunks;
  bool accumulate;
  REWIND_HOST_DEVICE void operator()(Index e) const {
    double s = partials[e];
    for (Index c = 1; c < chunks; ++c) s += partials[e + c * entries];
    target[e] = accumulate ? target[e] + s : s;
  }
};

// After a library's matrix product has written W x into post (outputs × batch), index
// i = o + outputs·col: z = post_i + b_o; pre_i = z (when pre is not null); post_i = σ(z).
struct BiasActivation {
  const double* b;
  double* pre;
  double* post;
  Index outputs;
  Activation activation;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    const double z = post[i] + b[i % outputs];
    if (pre) pre[i] = z;
    post[i] = activate(activation, z);
  }
};

// The bias gradient's chunk sums alone, index i = o + outputs·c over outputs × chunks: Σ g_o,col
// over the columns of chunk c, in order (LayerPartialSums' bias entries).
struct BiasPartialSums {
  const double* g;
  double* partials;
  Index outputs, batch;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    const Index o = i % outputs, c = i / outputs;
    const Index first = c * kBatchChunk;
    const Index last = first + kBatchChunk < batch ? first + kBatchChunk : batch;
    double s = 0.0;
    for (Index col = first; col < last; ++col) s += g[o + col * outputs];
    partials[i] = s;
  }
};

// to_i = from_i.
struct CopyValues {
  const double* from;
  double* to;
  REWIND_HOST_DEVICE void operator()(Index i) const { to[i] = from[i]; }
};

// φ(y) = y³ for the network's input (InputFeatures::cube).
struct Cube {
  const double* y;
  double* phi;
  REWIND_HOST_DEVICE void operator()(Index i) const { phi[i] = y[i] * y[i] * y[i]; }
};

// out_y = 3y² ⊙ g, the chain rule through φ(y) = y³ (the same expression as NeuralOde's).
struct CubeChain {
  const double* y;
  const double* g;
  double* out_y;
  REWIND_HOST_DEVICE void operator()(Index i) const { out_y[i] = 3.0 * (y[i] * y[i]) * g[i]; }
};

}  // namespace rwd::nn::device_kernels
