// rewind/neural/device_mlp.hpp — rwd::nn::Mlp's network on a Thrust backend: the batch, the
// parameters and every intermediate value stay in the backend's memory (the GPU's under CUDA).
//
//   rwd::nn::Mlp shape({3, 64, 64, 3}, rwd::nn::Activation::tanh);      // the architecture
//   rwd::nn::DeviceMlp<rwd::ThrustBackend> net(shape, /*max_batch=*/4096);  // allocates, once
//   net.forward(theta, X, Y, batch);                  // device pointers: Y = mlp(X)
//   net.vjp(theta, X, V, grad_X, grad_theta, batch);  // (∂Y/∂X)ᵀV and Σ_b (∂Y_b/∂θ)ᵀV_b
//
// The same layout, parameters and activations as rwd::nn::Mlp (θ per layer: W outputs × inputs
// column-major, then b; a batch one sample per column), so parameters move between the two
// unchanged (Mlp::initial_parameters, parameter files) and the results agree to round-off — not
// to the bit: the CPU network sums in its own blocked order and has its own vectorised tanh.
//
// Kernels (rewind/neural/device_dense_kernels.hpp): one launch per layer forward (the product,
// the bias and the activation fused), and per layer backward one for the activation's
// derivative, one for the input cotangent and two for the parameter gradient (chunk sums over
// the batch, then the chunks added in order). Every value is a fixed chain that depends on the
// shapes alone, so the same inputs give the same bits on every call and every launch
// configuration: the schedule-independence contract holds on the device.
//
// Matrix products (DenseProducts): rewind's own kernels above on every device system, or on
// CUDA cuBLAS's DGEMM (rewind/neural/cuda_blas_library.hpp: loaded at run time where the dynamic
// loader finds it) for the layer products, the input cotangents and the weight gradients, with
// the bias, the activation and the bias gradient still rewind's kernels. `automatic` takes
// cuBLAS when it loads and rewind's kernels otherwise; products() says which ran and
// products_note() why. Both are deterministic (cuBLAS: the same bits for the same call on the
// same GPU model and library version), so either keeps the schedule-independence contract; their
// bits differ from each other to round-off.
//
// vjp recomputes the forward pass from X (the object keeps no state between calls that a replay
// from a snapshot could miss). accumulate = true adds the parameter gradient into grad_theta
// instead of writing it (the bits of writing it to a buffer and adding that). Not thread-safe:
// the work vectors are shared by all calls; give each thread its own DeviceMlp.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/device_dense_kernels.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/types.hpp"

// cuBLAS only where the backend is CUDA's: nvcc, and the CUDA device system.
#if defined(__CUDACC__)
#include <thrust/detail/config.h>  // THRUST_DEVICE_SYSTEM
#endif
#if defined(__CUDACC__) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#define REWIND_DEVICE_MLP_CUBLAS 1
#include "rewind/neural/cuda_blas_library.hpp"
#else
#define REWIND_DEVICE_MLP_CUBLAS 0
#endif

namespace rwd::nn {

// Who computes DeviceMlp's matrix products (see above).
enum class DenseProducts {
  automatic,  // cuBLAS where it loads (CUDA only), else rewind's kernels
  kernels,    // rewind's own kernels, on every device system
  cublas,     // cuBLAS, or an error naming why it cannot be used
};

inline const char* to_string(DenseProducts p) {
  return p == DenseProducts::cublas    ? "cublas"
         : p == DenseProducts::kernels ? "kernels"
                                       : "automatic";
}

template <class B>
class DeviceMlp {
 public:
  using Vector = typename B::Vector;

  // The layers of `shape`; work vectors for batches of up to max_batch (>= 1) samples.
  DeviceMlp(const Mlp& shape, Index max_batch, DenseProducts products = DenseProducts::automatic)
      : layers_(shape.layers()), description_(shape.describe()), max_batch_(max_batch) {
    if (max_batch < 1)
      detail::fail<InvalidArgument>(description_, " on ", B::name, ": max_batch = ", max_batch,
                                    " must be >= 1");
    choose_products(products);
    Index widest = 0, most_entries = 0;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      offsets_.push_back(shape.parameter_offset(l));
      const DenseLayerShape& layer = layers_[l];
      pre_.push_back(B::zeros(layer.outputs * max_batch));
      post_.push_back(B::zeros(layer.outputs * max_batch));
      widest = std::max({widest, layer.inputs, layer.outputs});
      most_entries = std::max(most_entries, layer.outputs * layer.inputs + layer.outputs);
    }
    parameter_size_ = shape.parameter_size();
    grad_a_ = B::zeros(widest * max_batch);
    grad_b_ = B::zeros(widest * max_batch);
    partials_ = B::zeros(most_entries * chunks(max_batch));
  }

  Index input_size() const { return layers_.front().inputs; }
  Index output_size() const { return layers_.back().outputs; }
  Index parameter_size() const { return parameter_size_; }
  Index max_batch() const { return max_batch_; }
  const std::vector<DenseLayerShape>& layers() const { return layers_; }
  const std::string& describe() const { return description_; }
  // kernels or cublas: what computes the matrix products; and why (e.g. why not cuBLAS).
  DenseProducts products() const { return products_; }
  const std::string& products_note() const { return products_note_; }

  // Y = mlp(X): X inputs × batch, Y outputs × batch, θ parameter_size() values, all in the
  // backend's memory; 1 <= batch <= max_batch().
  void forward(const double* theta, const double* X, double* Y, Index batch) const {
    check_batch(batch);
    run_forward(theta, X, Y, batch);
  }

  // With V = ∂L/∂Y (outputs × batch): grad_X = (∂Y/∂X)ᵀ V (inputs × batch, overwritten) and the
  // batch's summed parameter gradient Σ_b (∂Y_b/∂θ)ᵀ V_b written to grad_theta, or added to it
  // with accumulate. grad_X must not overlap X or V.
  void vjp(const double* theta, const double* X, const double* V, double* grad_X,
           double* grad_theta, Index batch, bool accumulate = false) const {
    check_batch(batch);
    run_forward(theta, X, nullptr, batch);
    namespace k = device_kernels;
    const Index layer_count = static_cast<Index>(layers_.size());
    const double* g = V;
    double* buffers[2] = {B::data(grad_a_), B::data(grad_b_)};
    int next = 0;
    // The last layer's ∂L/∂z: V itself for an identity output, V ⊙ σ'(z) otherwise.
    const DenseLayerShape& last = layers_.back();
    if (last.activation != Activation::identity) {
      double* gz = buffers[next];
      next ^= 1;
      copy_device(V, gz, last.outputs * batch);
      B::for_each_index(
          last.outputs * batch,
          k::ActivationCotangent{B::data(pre_.back()), B::data(post_.back()), gz, last.activation});
      g = gz;
    }
    for (Index l = layer_count - 1; l >= 0; --l) {
      const DenseLayerShape& layer = layers_[static_cast<std::size_t>(l)];
      const double* W = theta + offsets_[static_cast<std::size_t>(l)];
      const double* x = l == 0 ? X : B::data(post_[static_cast<std::size_t>(l - 1)]);
      add_parameter_gradient(layer, g, x, grad_theta + offsets_[static_cast<std::size_t>(l)], batch,
                             accumulate);
      double* g_in = l == 0 ? grad_X : buffers[next];
      input_cotangent(layer, W, g, g_in, batch);
      if (l > 0) {
        const std::size_t below = static_cast<std::size_t>(l - 1);
        B::for_each_index(layer.inputs * batch,
                          k::ActivationCotangent{B::data(pre_[below]), B::data(post_[below]), g_in,
                                                 layers_[below].activation});
        g = g_in;
        next ^= 1;
      }
    }
  }

 private:
  static Index chunks(Index batch) {
    return (batch + device_kernels::kBatchChunk - 1) / device_kernels::kBatchChunk;
  }

  void check_batch(Index batch) const {
    if (batch < 1 || batch > max_batch_)
      detail::fail<InvalidArgument>(description_, " on ", B::name, ": batch ", batch,
                                    " is outside 1 … ", max_batch_, " (the work vectors' size)");
  }

  // Every layer in turn; the last layer's output into Y. With Y null (a reverse pass) the last
  // layer's values go to pre_/post_, and an identity last layer is not run at all: the reverse
  // pass needs neither its input cotangent's values nor its output.
  void run_forward(const double* theta, const double* X, double* Y, Index batch) const {
    const double* x = X;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const DenseLayerShape& layer = layers_[l];
      const double* W = theta + offsets_[l];
      const bool last = l + 1 == layers_.size();
      if (last && Y == nullptr && layer.activation == Activation::identity) return;
      double* out = last && Y != nullptr ? Y : B::data(post_[l]);
      double* pre = last && layer.activation == Activation::identity ? nullptr : B::data(pre_[l]);
      const double* b = W + layer.outputs * layer.inputs;
      if (products_ == DenseProducts::kernels) {
        B::for_each_index(layer.outputs * batch,
                          device_kernels::LayerForward{W, b, x, pre, out, layer.outputs,
                                                       layer.inputs, layer.activation});
      } else {
        library_gemm('N', 'N', layer.outputs, batch, layer.inputs, W, layer.outputs, x,
                     layer.inputs, 0.0, out, layer.outputs, "DeviceMlp layer product");
        B::for_each_index(layer.outputs * batch, device_kernels::BiasActivation{
                                                     b, pre, out, layer.outputs, layer.activation});
      }
      x = out;
    }
  }

  // target (the layer's W then b in θ's layout) = or += Σ over the batch of the layer's
  // parameter gradient, for the cotangent g of its pre-activation and its input x.
  void add_parameter_gradient(const DenseLayerShape& layer, const double* g, const double* x,
                              double* target, Index batch, bool accumulate) const {
    namespace k = device_kernels;
    const Index chunk_count = chunks(batch);
    double* partials = B::data(partials_);
    if (products_ == DenseProducts::kernels) {
      const Index entries = layer.outputs * layer.inputs + layer.outputs;
      B::for_each_index(entries * chunk_count,
                        k::LayerPartialSums{g, x, partials, layer.outputs, layer.inputs, batch});
      B::for_each_index(entries,
                        k::FoldPartialSums{partials, target, entries, chunk_count, accumulate});
      return;
    }
    // dW (+)= G Xᵀ by the library; db by the chunked sums.
    library_gemm('N', 'T', layer.outputs, layer.inputs, batch, g, layer.outputs, x, layer.inputs,
                 accumulate ? 1.0 : 0.0, target, layer.outputs, "DeviceMlp weight gradient");
    double* bias_target = target + layer.outputs * layer.inputs;
    B::for_each_index(layer.outputs * chunk_count,
                      k::BiasPartialSums{g, partials, layer.outputs, batch});
    B::for_each_index(layer.outputs, k::FoldPartialSums{partials, bias_target, layer.outputs,
                                                        chunk_count, accumulate});
  }

  // g_in = Wᵀ g (inputs × batch).
  void input_cotangent(const DenseLayerShape& layer, const double* W, const double* g, double* g_in,
                       Index batch) const {
    if (products_ == DenseProducts::kernels) {
      B::for_each_index(layer.inputs * batch,
                        device_kernels::InputCotangent{W, g, g_in, layer.outputs, layer.inputs});
      return;
    }
    library_gemm('T', 'N', layer.inputs, batch, layer.outputs, W, layer.outputs, g, layer.outputs,
                 0.0, g_in, layer.inputs, "DeviceMlp input cotangent");
  }

  // C = op(A) op(Bm) + β C by the matrix library (products_ == cublas only).
  void library_gemm([[maybe_unused]] char op_a, [[maybe_unused]] char op_b,
                    [[maybe_unused]] Index m, [[maybe_unused]] Index n, [[maybe_unused]] Index k,
                    [[maybe_unused]] const double* A, [[maybe_unused]] Index lda,
                    [[maybe_unused]] const double* Bm, [[maybe_unused]] Index ldb,
                    [[maybe_unused]] double beta, [[maybe_unused]] double* C,
                    [[maybe_unused]] Index ldc, [[maybe_unused]] const char* operation) const {
#if REWIND_DEVICE_MLP_CUBLAS
    cublas::Library::get()->gemm(op_a, op_b, m, n, k, A, lda, Bm, ldb, beta, C, ldc, operation);
#else
    detail::fail<InvalidArgument>(operation, ": no matrix library on ", B::name);
#endif
  }

  void choose_products(DenseProducts wanted) {
    products_ = DenseProducts::kernels;
#if REWIND_DEVICE_MLP_CUBLAS
    if (wanted == DenseProducts::kernels) {
      products_note_ = "rewind's kernels, as asked";
      return;
    }
    std::string why;
    if (const cublas::Library* library = cublas::Library::get(&why)) {
      products_ = DenseProducts::cublas;
      products_note_ = "cuBLAS (" + library->name() + ")";
      return;
    }
    if (wanted == DenseProducts::cublas)
      detail::fail<InvalidArgument>(description_, " on ", B::name, ": ", why);
    products_note_ = "rewind's kernels: " + why;
#else
    if (wanted == DenseProducts::cublas)
      detail::fail<InvalidArgument>(description_, " on ", B::name,
                                    ": cuBLAS needs the CUDA device system (a .cu file built by "
                                    "nvcc, linked to rewind::thrust_cuda)");
    products_note_ = std::string("rewind's kernels (") + B::name + ")";
#endif
  }

  static void copy_device(const double* from, double* to, Index n) {
    B::for_each_index(n, device_kernels::CopyValues{from, to});
  }

  std::vector<DenseLayerShape> layers_;
  std::vector<Index> offsets_;
  std::string description_;
  Index parameter_size_ = 0;
  Index max_batch_ = 0;
  DenseProducts products_ = DenseProducts::kernels;
  std::string products_note_;
  mutable std::vector<Vector> pre_, post_;  // per layer, outputs × max_batch
  mutable Vector grad_a_, grad_b_;          // cotangents, widest × max_batch, used in turn
  mutable Vector partials_;                 // the parameter gradient's chunk sums
};

}  // namespace rwd::nn
