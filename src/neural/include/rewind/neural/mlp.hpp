// rewind/neural/mlp.hpp — a multilayer perceptron with one flat parameter vector and exact batched
// vector-Jacobian products, for neural-ODE right-hand sides.
//
//   rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);   // 2 → 50 (tanh) → 2 (identity)
//   Eigen::VectorXd theta = mlp.initial_parameters(/*seed=*/1);  // 252 numbers
//   auto ws = mlp.make_workspace(/*max_batch=*/20);              // allocates, once
//   Eigen::MatrixXd X(2, 20), Y(2, 20);                           // one sample per column
//   mlp.forward(theta.data(), X, Y, ws);                          // Y = mlp(X)
//   Eigen::MatrixXd V = …, grad_X(2, 20);                         // V = ∂L/∂Y
//   Eigen::VectorXd grad_theta(mlp.parameter_size());
//   mlp.vjp(theta.data(), X, V, grad_X, grad_theta.data(), ws);  // ∂L/∂X and ∂L/∂θ
//
// Layout. A batch is a matrix with one sample per column (inputs × batch), so B samples of
// dimension D stored one after another — a neural ODE's batched state — are a D × B
// column-major matrix without copying: Eigen::Map<Eigen::MatrixXd>(y.data(), D, B). θ holds,
// for each layer in order, W (outputs × inputs, column-major) and then b (outputs): layer ℓ
// computes a_ℓ = σ_ℓ(W_ℓ a_{ℓ−1} + b_ℓ). One batch pass is one matrix product per layer (W X),
// and the reverse pass two (Wᵀ G for the input cotangent, G Xᵀ for dW), so the cost is that of
// matrix-matrix kernels, not of B matrix-vector products.
//
// Exactness and determinism: vjp is the exact transpose of the forward map's Jacobian (reverse
// mode by hand, activation derivatives in closed form); the same inputs give the same bits
// every call (fixed operation order, no threads). vjp recomputes the forward pass itself, so
// the object holds no hidden state between calls — what a replay from a snapshot relies on.
//
// Columns are independent to the bit: a sample's outputs (forward's Y, vjp's grad_X, and
// vjp_per_sample's parameter gradient) are the same bits whatever the batch size and wherever
// the sample sits in the batch. The layer products are rewind's own column-by-column loops
// (each output one fixed chain over its own column), not Eigen's matrix product, whose blocking
// — and, for one column, whole algorithm — depends on the shape; and the work matrices' columns
// are padded to whole SIMD vectors so that a vectorised activation treats every value alike. This
// is what lets a minibatch be split across processes with the same gradient bits
// (rwd::training::NeuralOdeTrainer with a BatchExchange). vjp's summed parameter gradient is a
// sum over the batch, so its bits do depend on the batch; vjp_per_sample's do not.
//
// Saved forward passes (make_workspace(max_batch, saved_passes)): forward keeps its layers'
// pre-activations and outputs in one of `saved_passes` slots (the oldest is reused), keyed by the
// bits of X and of θ; a vjp at the same X and θ then takes them instead of re-running the
// forward pass — the values it would have computed, bit for bit (the same function of the same
// bits), so only the time changes. An adjoint evaluates the VJP at the stage values its forward
// sweep evaluated the network at (with the stages kept, nothing else), so every VJP of a training
// window finds its pass when the slots hold all of the window's stages. A slot is used by one vjp
// (its matrices trade places with the workspace's, no copy) and θ is compared in full (P values)
// once per call. Zero slots (the default): vjp always re-runs the pass.
//
// Allocation: forward and vjp allocate nothing; every intermediate matrix lives in a Workspace
// made once for the largest batch, and smaller batches use its leading columns. Pass
// column-major matrices, Maps or column blocks (anything an Eigen::Ref<MatrixXd> binds to
// without a copy); an expression such as a transpose would be copied into a temporary first.
// A Workspace must not be shared between threads; the Mlp itself is immutable and may be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/neural/activation.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

// One dense layer: outputs = activation(W · inputs + b).
struct DenseLayerShape {
  Index inputs = 0;
  Index outputs = 0;
  Activation activation = Activation::identity;
  friend bool operator==(const DenseLayerShape&, const DenseLayerShape&) = default;
};

class Mlp {
 public:
  // widths = {in, h1, …, out} (at least two, each >= 1); `hidden` after every layer but the
  // last, `output` after the last.
  Mlp(std::vector<Index> widths, Activation hidden, Activation output = Activation::identity);
  // Any chain of layers: layers[i].outputs == layers[i + 1].inputs.
  explicit Mlp(std::vector<DenseLayerShape> layers);

  Index input_size() const { return layers_.front().inputs; }
  Index output_size() const { return layers_.back().outputs; }
  // Σ over layers of outputs·inputs + outputs.
  Index parameter_size() const { return parameter_size_; }
  const std::vector<DenseLayerShape>& layers() const { return layers_; }
  // Where layer ℓ's W starts in θ (its b follows W, outputs·inputs entries later);
  // ℓ < layers().size().
  Index parameter_offset(std::size_t layer) const { return offsets_.at(layer); }
  // The widths, then the hidden activation, then the output activation unless identity:
  // "2-50-2 tanh", "3-8-1 relu, output softplus", "2-2" (one identity layer). Hidden layers
  // with different activations are listed in order: "2-4-4-2 tanh,relu".
  std::string describe() const;

  // Intermediate results of one pass, for batches of up to max_batch samples. Made by
  // make_workspace; only the Mlp that made it (or one with the same layer widths) may use it.
  class Workspace {
   public:
    Index max_batch() const { return max_batch_; }

   private:
    friend class Mlp;
    Index max_batch_ = 0;
    std::vector<Eigen::MatrixXd> pre;   // W a + b of each layer, outputs × max_batch
    std::vector<Eigen::MatrixXd> post;  // σ(pre) of each layer, outputs × max_batch
    Eigen::MatrixXd grad_a, grad_b;     // cotangents, widest layer × max_batch, used in turn
    // Every layer's Wᵀ for the reverse pass, one after another, made once per θ version (a
    // transpose per call was most of a one-sample VJP).
    Eigen::VectorXd transposed;
    std::uint64_t transposed_version = 0;   // the θ version it was made for; 0: none
    std::vector<DenseLayerShape> made_for;  // the layers it was made for
    // (Rows are padded to whole SIMD vectors; see mlp.cpp.)
    struct SavedPass {
      Eigen::MatrixXd x;  // the input, inputs × batch
      std::vector<Eigen::MatrixXd> pre, post;
      Index batch = 0;                  // columns of x in use
      std::uint64_t theta_version = 0;  // 0: empty
    };
    std::vector<SavedPass> saved;
    std::size_t next_slot = 0;        // the slot the next forward fills
    Eigen::VectorXd theta_key;        // θ of the current version (P values)
    std::uint64_t theta_version = 0;  // bumped whenever θ's bits change
    // accumulate_vjp_per_sample's waiting calls. Per layer k, call c's ∂L/∂z (outputs_k ×
    // batch, column-major) at deferred_g[k] + c · deferred_g_stride[k] and the layer's input
    // (inputs_k × batch) likewise in deferred_a[k]: one contiguous copy per call. The strides
    // are a cache line longer than a call's values, so that one sample's calls, which
    // add_deferred_vjps reads together, do not all fall into the same cache sets.
    std::vector<Eigen::VectorXd> deferred_g, deferred_a;
    std::vector<Index> deferred_g_stride, deferred_a_stride;
    std::size_t deferred_capacity = 0, deferred_count = 0;
    double* deferred_target = nullptr;  // grad_theta's first entry
    Index deferred_stride = 0, deferred_batch = 0;
  };
  // The most calls accumulate_vjp_per_sample lets wait (more stages than any tableau has).
  static constexpr std::size_t kMaxDeferred = 32;
  // max_batch >= 1, saved_passes >= 0 (see "Saved forward passes" above), 0 <= deferred_calls <=
  // kMaxDeferred (accumulate_vjp_per_sample). Allocates; forward and vjp with this workspace then
  // never do.
  Workspace make_workspace(Index max_batch, Index saved_passes = 0, Index deferred_calls = 0) const;

  // Y = mlp(X).  X: inputs × batch, Y: outputs × batch (overwritten), 0 <= batch <=
  // ws.max_batch(), theta: parameter_size() values. Wrong shapes are an rwd::InvalidArgument.
  void forward(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
               Eigen::Ref<Eigen::MatrixXd> Y, Workspace& ws) const;

  // With V = ∂L/∂Y (outputs × batch): grad_X = (∂Y/∂X)ᵀ V (inputs × batch) and grad_theta =
  // Σ over the batch of (∂Y/∂θ)ᵀ V (parameter_size() values). Both are overwritten. The
  // forward pass is recomputed from X, so no call depends on an earlier one.
  void vjp(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
           const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Ref<Eigen::MatrixXd> grad_X,
           double* grad_theta, Workspace& ws) const;

  // The same, with the parameter gradient of every sample on its own: column s of grad_theta
  // (parameter_size() × batch) is (∂Y_s/∂θ)ᵀ V_s. vjp's grad_theta is the sum of these columns
  // (up to the order of the additions).
  void vjp_per_sample(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                      const Eigen::Ref<const Eigen::MatrixXd>& V,
                      Eigen::Ref<Eigen::MatrixXd> grad_X, Eigen::Ref<Eigen::MatrixXd> grad_theta,
                      Workspace& ws) const;

  // vjp_per_sample adding into grad_theta instead of overwriting it: column s of grad_theta
  // += (∂Y_s/∂θ)ᵀ V_s, each entry one product added to what is there — the same bits as
  // vjp_per_sample into a buffer followed by grad_theta += buffer, in one pass and without the
  // buffer (an adjoint accumulating per-sample gradients over steps and stages reads and writes
  // them once per stage instead of three times). grad_X is overwritten as in vjp.
  //
  // With a workspace made with deferred_calls > 0 the addition into grad_theta may wait: the
  // call keeps what it needs (each layer's ∂L/∂z and input, per sample) and
  // add_deferred_vjps(ws) adds every waiting call's share, in call order, entry by entry — the
  // same additions in the same order as one call at a time, so the same bits, with grad_theta
  // read and written once for all of them instead of once per call (an explicit Runge–Kutta
  // step's stages, rwd::nn::NeuralOde::vjp_accumulate). A call with another grad_theta, or one
  // beyond deferred_calls waiting calls, adds the waiting ones first. grad_theta must stay
  // where it is until add_deferred_vjps; grad_X is written at once.
  void accumulate_vjp_per_sample(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                                 const Eigen::Ref<const Eigen::MatrixXd>& V,
                                 Eigen::Ref<Eigen::MatrixXd> grad_X,
                                 Eigen::Ref<Eigen::MatrixXd> grad_theta, Workspace& ws) const;
  void add_deferred_vjps(Workspace& ws) const;
  // Forgets the waiting calls without adding them (their grad_theta may be gone: an accumulation
  // abandoned by an error).
  void discard_deferred_vjps(Workspace& ws) const { ws.deferred_count = 0; }

  // Glorot/Xavier-uniform weights, W ~ U(−a, a) with a = √(6 / (inputs + outputs)) (Glorot &
  // Bengio 2010), zero biases. The same seed gives the same bits on every platform: the
  // generator is std::mt19937_64 (its output sequence is fixed by the standard) and the
  // conversion to doubles is done here, not by std::uniform_real_distribution (whose algorithm
  // is left to the library).
  Eigen::VectorXd initial_parameters(std::uint64_t seed) const;

 private:
  void check_call(const char* call, const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                  const Workspace& ws) const;
  void check_vjp(const char* call, const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                 const Eigen::Ref<const Eigen::MatrixXd>& V,
                 const Eigen::Ref<Eigen::MatrixXd>& grad_X, const Workspace& ws) const;
  void run_forward(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X, Index batch,
                   Workspace& ws) const;
  // ws.theta_version for θ's bits (a new version when they differ from the last seen).
  std::uint64_t theta_version(const double* theta, Workspace& ws) const;
  // Every layer's Wᵀ at θ of that version (ws.transposed), remade only when the version changed.
  const double* transposed_weights(const double* theta, std::uint64_t version, Workspace& ws) const;
  // After run_forward: trade the workspace's pre/post for the next slot's, keyed by X and θ.
  void save_pass(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                 Workspace& ws) const;
  // Before a reverse pass: the saved pass of (X, θ of that version) traded into the workspace,
  // or run_forward.
  void restore_or_run_forward(const double* theta, std::uint64_t version,
                              const Eigen::Ref<const Eigen::MatrixXd>& X, Workspace& ws) const;
  template <bool accumulate>
  void per_sample(const char* call, const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                  const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Ref<Eigen::MatrixXd>& grad_X,
                  Eigen::Ref<Eigen::MatrixXd>& grad_theta, Workspace& ws) const;
  template <class ParameterGradient>
  void reverse_pass(const double* theta, const Eigen::Ref<const Eigen::MatrixXd>& X,
                    const Eigen::Ref<const Eigen::MatrixXd>& V, Eigen::Ref<Eigen::MatrixXd>& grad_X,
                    Workspace& ws, ParameterGradient&& parameters) const;

  std::vector<DenseLayerShape> layers_;
  std::vector<Index> offsets_;  // start of layer ℓ's W in θ; its b follows W
  Index parameter_size_ = 0;
  Index widest_ = 0;
};

}  // namespace rwd::nn
