// rewind/neural/neural_ode.hpp — a neural network as the right-hand side of an ODE, batched, as a
// rwd::Problem: every integrator, schedule, store and adjoint driver takes it unchanged.
//
//   dy/dt = mlp(φ(y); θ)      for each of B samples at once,
//
// where φ is an elementwise input feature map (identity, or y³ as in the spiral demonstration of
// Chen et al. 2018) and θ is the network's flat parameter vector. The state vector holds the B
// samples one after another (sample b's D components at [b·D, (b+1)·D)), which is exactly a
// column-major D × B matrix, so one right-hand side is one batched pass through the network:
// a few matrix products, not B small ones.
//
//   rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
//   rwd::nn::NeuralOde model(mlp, /*batch=*/20, rwd::nn::InputFeatures::cube);
//   Eigen::VectorXd theta = mlp.initial_parameters(/*seed=*/1);
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.025, 10));
//   rwd::CheckpointedAdjoint driver(stepper, objective);      // exact discrete adjoint
//
// The vector-Jacobian product is exact: the network's own VJP (Mlp::vjp, which sums the
// parameter gradient over the batch) followed by the chain rule through φ. Without a time input
// (below) the time argument is ignored: the network is autonomous. Not thread-safe: rhs and vjp
// share preallocated work matrices (so they never allocate); give each thread its own NeuralOde.
//
// One parameter copy per sample (ParameterCopies::per_sample): θ is then B copies of the
// network's parameters, θ = [θ_1, …, θ_B], sample b's derivative uses θ_b, and an adjoint
// driver's dJ/dθ comes out as B per-sample gradients side by side — each accumulated over steps
// and stages in its own slot, so its bits do not depend on B or on where the sample sits (the
// network's columns are independent to the bit, see mlp.hpp). That is how a minibatch is split
// across processes with the same gradient (rwd::training::NeuralOdeTrainer). The copies must be
// equal — one batched pass then uses θ_1 for every sample — and rhs and vjp check it (bitwise,
// B·P comparisons) and refuse copies that differ. The check reads all B·P values on every call,
// as much memory as the per-sample gradients themselves (17% of a Lorenz-63 3-64-64-3 training
// iteration at batch 32): an owner that writes the copies itself and hands the model to no one
// else may pass CopyCheck::by_owner to skip it (the trainer does).
//
//   rwd::nn::NeuralOde model(mlp, 5, rwd::nn::InputFeatures::cube,
//                            rwd::nn::ParameterCopies::per_sample);   // parameter_size() = 5·P
//   Eigen::VectorXd copies = theta.replicate(5, 1);
//
// A time input (NeuralOdeTime{true, shift, scale}): the network also sees τ_b = (t + offset_b −
// shift) / scale, one more input row (S + 1 inputs, S outputs), each sample with its own time
// offset (set_time_offsets; zero by default) — so windows that start at different times can run
// as one batch on a shared local clock t. The parameter gradient includes the paths through τ;
// dτ/dt is not formed (the step times are fixed). rwd::nn::NeuralField is the same field for one
// sample at a time.
//
// Step rates (set_step_rates): samples whose true steps differ — training windows on irregular
// observation times — still run as one batch. The batch steps on a shared clock of unit steps
// (StepControl::fixed(0, 1, N): step n covers s ∈ [n, n + 1]), and sample b's step n stands for
// its true step of size h_bn from the true time t_bn:
//   dy_b/ds = h_bn · mlp(φ(y_b), τ_b),   τ_b = (t_bn + (s − n)·h_bn − shift) / scale,
// which is the sample's own ODE with time rescaled over that step (an explicit Runge–Kutta step
// of size 1 of this field is the step of size h_bn of the original to rounding; with time input
// the network sees the true stage times). The index n comes from the stepper (begin_step, which
// rwd::ExplicitRungeKutta calls before every step it takes, replays or reverses); the stage
// time s cannot say it, since the last stage of step n and the first of step n + 1 share a time.
// Every product scales a sample's own column, so the per-sample bits do not depend on the batch.
//
// vjp_accumulate(t, y, θ, v, out_y, mu) is vjp with its parameter part added to mu instead of
// written out, the same bits as vjp into a buffer followed by mu += buffer; explicit Runge–Kutta
// steppers use it when a problem offers it, and call finish_vjp_accumulation(mu) after each step's
// stages. With per-sample copies it adds every product straight into mu's B slots (one pass over
// B·P values per stage instead of three; with defer_parameter_gradients one per step).
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

// φ, applied to every component of y before the network sees it.
enum class InputFeatures {
  identity,  // φ(y) = y
  cube,      // φ(y) = y³ (the spiral's true dynamics are linear in y³)
};

inline std::string_view to_string(InputFeatures features) {
  return features == InputFeatures::cube ? "cube" : "identity";
}

inline InputFeatures parse_input_features(std::string_view name) {
  if (name == "identity" || name == "none") return InputFeatures::identity;
  if (name == "cube") return InputFeatures::cube;
  rwd::detail::fail<InvalidArgument>("unknown input features '", name, "' (known: identity, cube)");
}

// Whether the samples of a batch share θ (the model) or each have a copy (per-sample gradients).
enum class ParameterCopies { shared, per_sample };

// An optional time input of the network (see above).
struct NeuralOdeTime {
  bool enabled = false;
  double shift = 0.0, scale = 1.0;
};

// Who makes sure per-sample copies are equal: the model on every call, or the model's owner
// (who writes the copies itself; see above).
enum class CopyCheck { every_call, by_owner };

class NeuralOde {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "neural-ode";

  NeuralOde(Mlp mlp, Index batch, InputFeatures features = InputFeatures::identity,
            ParameterCopies copies = ParameterCopies::shared,
            CopyCheck check = CopyCheck::every_call, NeuralOdeTime time = {})
      : mlp_(std::move(mlp)),
        batch_(batch),
        features_(features),
        copies_(copies),
        check_(check),
        time_(time),
        workspace_(mlp_.make_workspace(batch)) {
    const Index extra = time_.enabled ? 1 : 0;
    if (mlp_.input_size() != mlp_.output_size() + extra)
      rwd::detail::fail<InvalidArgument>(
          "a neural ODE ",
          time_.enabled ? "with a time input needs a network of S + 1 inputs and S outputs"
                        : "needs a network whose output size equals its input size",
          " (", mlp_.describe(), " maps ", mlp_.input_size(), " to ", mlp_.output_size(), ")");
    if (batch_ < 1)
      rwd::detail::fail<InvalidArgument>("neural ODE batch = ", batch_, " must be >= 1");
    if (time_.enabled &&
        !(std::isfinite(time_.shift) && std::isfinite(time_.scale) && time_.scale > 0.0))
      rwd::detail::fail<InvalidArgument>("neural ODE time input (t − ", time_.shift, ") / ",
                                         time_.scale, " needs a finite shift and a scale > 0");
    const Index inputs = mlp_.input_size();
    phi_.resize(inputs, batch_);
    grad_phi_.resize(inputs, batch_);
    offsets_.setZero(batch_);
    if (copies_ == ParameterCopies::shared) theta_stage_.resize(mlp_.parameter_size());
  }

  // With a time input: sample b sees t + offsets[b] (B values, finite).
  void set_time_offsets(const Eigen::Ref<const Eigen::VectorXd>& offsets) {
    if (!time_.enabled)
      rwd::detail::fail<InvalidArgument>(describe(), ": time offsets need a time input");
    if (offsets.size() != batch_ || !offsets.allFinite())
      rwd::detail::fail<InvalidArgument>(describe(), ": ", offsets.size(),
                                         " time offsets for a batch of ", batch_,
                                         " (each must be finite)");
    offsets_ = offsets;
  }

  // Step rates (above): sizes(b, n) = h_bn > 0 and, with a time input, starts(b, n) = t_bn
  // (B × N each, finite; starts may be empty without a time input). They replace the time
  // offsets. The stepper must be rwd::ExplicitRungeKutta with StepControl::fixed(0, 1, N).
  void set_step_rates(Eigen::MatrixXd sizes, Eigen::MatrixXd starts = {}) {
    if (sizes.rows() != batch_ || sizes.cols() < 1 || !sizes.allFinite() ||
        !(sizes.array() > 0.0).all())
      rwd::detail::fail<InvalidArgument>(describe(), ": step rates need a batch of ", batch_,
                                         " rows of finite sizes > 0, not ", sizes.rows(), " × ",
                                         sizes.cols());
    if (time_.enabled &&
        (starts.rows() != batch_ || starts.cols() != sizes.cols() || !starts.allFinite()))
      rwd::detail::fail<InvalidArgument>(describe(), ": step rates with a time input need ", batch_,
                                         " × ", sizes.cols(), " finite start times, not ",
                                         starts.rows(), " × ", starts.cols());
    rate_sizes_ = std::move(sizes);
    rate_starts_ = time_.enabled ? std::move(starts) : Eigen::MatrixXd();
    scaled_cotangent_.resize(dimension(), batch_);
    current_step_ = -1;
  }
  // Back to one clock for every sample (t + offset_b).
  void clear_step_rates() {
    rate_sizes_.resize(0, 0);
    rate_starts_.resize(0, 0);
    current_step_ = -1;
  }
  bool has_step_rates() const { return rate_sizes_.size() > 0; }
  // Whether the field currently depends on the step index (rwd::BacksolveAdjoint refuses it).
  bool depends_on_step() const { return has_step_rates(); }
  // The step the next evaluations belong to (rwd::ExplicitRungeKutta calls it; see above).
  void begin_step(Index step) const { current_step_ = step; }

  // Keep the network's last n forward passes for the VJPs at the same states (Mlp's saved
  // forward passes: the same bits, no re-run; n = the steps × stages of an adjoint's window
  // covers all of them). Replaces the work matrices: allocates.
  void keep_forward_passes(Index n) {
    saved_passes_ = n;
    workspace_ = mlp_.make_workspace(batch_, saved_passes_, deferred_stages_);
  }
  // Per-sample copies: let vjp_accumulate's additions into mu wait for finish_vjp_accumulation
  // (up to `stages` calls; Mlp::accumulate_vjp_per_sample): one pass over mu's B·P values per
  // Runge–Kutta step instead of one per stage, the same bits. Allocates.
  void defer_parameter_gradients(Index stages) {
    deferred_stages_ = stages;
    workspace_ = mlp_.make_workspace(batch_, saved_passes_, deferred_stages_);
  }

  Index dimension() const { return mlp_.output_size(); }
  bool time_input() const { return time_.enabled; }
  Index batch() const { return batch_; }
  Index state_size() const { return dimension() * batch_; }
  // θ's length: the network's parameters, times the batch for per-sample copies.
  Index parameter_size() const {
    return copies_ == ParameterCopies::per_sample ? mlp_.parameter_size() * batch_
                                                  : mlp_.parameter_size();
  }
  const Mlp& network() const { return mlp_; }
  InputFeatures features() const { return features_; }
  ParameterCopies parameter_copies() const { return copies_; }
  std::string describe() const {
    return describe(mlp_, features_, batch_) +
           (copies_ == ParameterCopies::per_sample ? ", a parameter copy per sample" : "");
  }
  // The description of a model of this network, features and batch (shared parameters).
  static std::string describe(const Mlp& mlp, InputFeatures features, Index batch) {
    return "neural ODE " + mlp.describe() + " on " + std::string(to_string(features)) +
           " features, batch " + std::to_string(batch);
  }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    check_sizes(y, theta, f.size(), "output f");
    Eigen::Map<Eigen::MatrixXd> out(f.data(), dimension(), batch_);
    mlp_.forward(theta.data(), features_of(t, y), out, workspace_);
    if (has_step_rates()) {
      const Index n = rated_step();
      for (Index b = 0; b < batch_; ++b) out.col(b) *= rate_sizes_(b, n);
    }
  }

  // out_y = (∂f/∂y)ᵀ v = φ'(y) ⊙ (∂mlp/∂φ)ᵀ v;  out_theta = Σ_b (∂mlp/∂θ)ᵀ v_b, or with
  // per-sample copies the B terms (∂mlp/∂θ_b)ᵀ v_b one after another.
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    check_vjp(y, theta, v, out_y, out_theta.size(), "outputs");
    const Eigen::Map<const Eigen::MatrixXd> cotangent = network_cotangent(v);
    if (copies_ == ParameterCopies::per_sample)
      mlp_.vjp_per_sample(
          theta.data(), features_of(t, y), cotangent, grad_phi_,
          Eigen::Map<Eigen::MatrixXd>(out_theta.data(), mlp_.parameter_size(), batch_), workspace_);
    else
      mlp_.vjp(theta.data(), features_of(t, y), cotangent, grad_phi_, out_theta.data(), workspace_);
    chain_through_features(y, out_y);
  }

  // vjp with mu += out_theta instead of out_theta = (see above): the same bits, one pass. After
  // defer_parameter_gradients the addition may wait for finish_vjp_accumulation(mu), which
  // explicit Runge–Kutta steppers call after each step's stages.
  void vjp_accumulate(double t, const Vector& y, const Vector& theta, const Vector& v,
                      Vector& out_y, Vector& mu) const {
    if (copies_ == ParameterCopies::shared) {
      vjp(t, y, theta, v, out_y, theta_stage_);
      EigenBackend::axpy(1.0, theta_stage_, mu);
      return;
    }
    check_vjp(y, theta, v, out_y, mu.size(), "out_y and mu");
    const Eigen::Map<const Eigen::MatrixXd> cotangent = network_cotangent(v);
    mlp_.accumulate_vjp_per_sample(
        theta.data(), features_of(t, y), cotangent, grad_phi_,
        Eigen::Map<Eigen::MatrixXd>(mu.data(), mlp_.parameter_size(), batch_), workspace_);
    chain_through_features(y, out_y);
  }

  void finish_vjp_accumulation(Vector&) const { mlp_.add_deferred_vjps(workspace_); }
  // Forgets waiting terms (a reverse sweep abandoned by an error between a step's stages: its μ
  // may be gone, and they must not reach the next run's).
  void drop_held_vjp_terms() const { mlp_.discard_deferred_vjps(workspace_); }

 private:
  void check_vjp(const Vector& y, const Vector& theta, const Vector& v, const Vector& out_y,
                 Eigen::Index theta_out, const char* what) const {
    check_sizes(y, theta, v.size(), "cotangent v");
    if (out_y.size() != y.size() || theta_out != theta.size())
      rwd::detail::fail<InvalidArgument>("neural ODE vjp: ", what, " have ", out_y.size(), " and ",
                                         theta_out, " elements but must have ", y.size(), " and ",
                                         theta.size());
  }

  // The cotangent of the network's output: v, or with step rates h_bn·v_b (the network's output
  // is scaled by h_bn, so its cotangent is).
  Eigen::Map<const Eigen::MatrixXd> network_cotangent(const Vector& v) const {
    if (!has_step_rates()) return {v.data(), dimension(), batch_};
    const Index n = rated_step();
    const Eigen::Map<const Eigen::MatrixXd> given(v.data(), dimension(), batch_);
    for (Index b = 0; b < batch_; ++b) scaled_cotangent_.col(b) = rate_sizes_(b, n) * given.col(b);
    return {scaled_cotangent_.data(), dimension(), batch_};
  }

  // The step whose rates apply (begin_step's), checked against the rates' table.
  Index rated_step() const {
    if (current_step_ < 0 || current_step_ >= rate_sizes_.cols())
      rwd::detail::fail<InvalidArgument>(
          describe(), ": step ", current_step_, " has no step rate (", rate_sizes_.cols(),
          " steps set); step rates need a stepper that calls begin_step (rwd::ExplicitRungeKutta)");
    return current_step_;
  }

  // out_y = φ'(y) ⊙ (the state rows of grad_phi_).
  void chain_through_features(const Vector& y, Vector& out_y) const {
    const Index s = dimension();
    Eigen::Map<Eigen::MatrixXd> gy(out_y.data(), s, batch_);
    const Eigen::Map<const Eigen::MatrixXd> state(y.data(), s, batch_);
    if (features_ == InputFeatures::cube)
      gy = (3.0 * state.array().square() * grad_phi_.topRows(s).array()).matrix();
    else
      gy = grad_phi_.topRows(s);
  }

  void check_sizes(const Vector& y, const Vector& theta, Eigen::Index third,
                   const char* what) const {
    if (y.size() != state_size() || third != state_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": state y and ", what, " have ", y.size(),
                                         " and ", third, " elements but must have ", state_size(),
                                         " (", dimension(), " × batch ", batch_, ")");
    if (theta.size() != parameter_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": parameter vector theta has ", theta.size(),
                                         " elements but the model takes ", parameter_size());
    if (copies_ == ParameterCopies::per_sample && check_ == CopyCheck::every_call)
      check_copies_equal(theta);
  }

  // One batched pass uses the first copy for every sample: right only if all copies are equal.
  void check_copies_equal(const Vector& theta) const {
    const Index p = mlp_.parameter_size();
    const auto bytes = static_cast<std::size_t>(p) * sizeof(double);
    for (Index b = 1; b < batch_; ++b)
      if (std::memcmp(theta.data() + b * p, theta.data(), bytes) != 0)
        rwd::detail::fail<InvalidArgument>(
            describe(), ": parameter copy ", b,
            " differs from copy 0; per-sample copies must be equal (they exist so that each "
            "sample's gradient is accumulated on its own)");
  }

  // The network's input: φ(y) (D × B) — the state itself for identity features (no copy), the
  // cubes in phi_ otherwise — and with a time input the row of τ_b below it, in phi_.
  Eigen::Map<const Eigen::MatrixXd> features_of(double t, const Vector& y) const {
    const Index s = dimension();
    const Eigen::Map<const Eigen::MatrixXd> state(y.data(), s, batch_);
    if (features_ == InputFeatures::identity && !time_.enabled) return state;
    if (features_ == InputFeatures::cube)
      phi_.topRows(s) = state.array().cube().matrix();
    else
      phi_.topRows(s) = state;
    if (time_.enabled && has_step_rates()) {
      const Index n = rated_step();
      const double within = t - static_cast<double>(n);  // s − n on the shared unit-step clock
      for (Index b = 0; b < batch_; ++b)
        phi_(s, b) = (rate_starts_(b, n) + within * rate_sizes_(b, n) - time_.shift) / time_.scale;
    } else if (time_.enabled) {
      for (Index b = 0; b < batch_; ++b) phi_(s, b) = (t + offsets_[b] - time_.shift) / time_.scale;
    }
    return Eigen::Map<const Eigen::MatrixXd>(phi_.data(), phi_.rows(), batch_);
  }

  Mlp mlp_;
  Index batch_;
  InputFeatures features_;
  ParameterCopies copies_;
  CopyCheck check_;
  NeuralOdeTime time_;
  Eigen::VectorXd offsets_;  // per-sample time offsets (time input only)
  // Step rates (B × N, empty when not set), the step they are read at, and the scaled cotangent.
  Eigen::MatrixXd rate_sizes_, rate_starts_;
  mutable Index current_step_ = -1;
  mutable Eigen::MatrixXd scaled_cotangent_;
  Index saved_passes_ = 0, deferred_stages_ = 0;
  mutable Mlp::Workspace workspace_;
  mutable Eigen::VectorXd theta_stage_;  // vjp_accumulate's parameter part (shared θ only)
  mutable Eigen::MatrixXd phi_;       // the input [φ(y); τ], inputs × B (unused: identity, no t)
  mutable Eigen::MatrixXd grad_phi_;  // (∂mlp/∂input)ᵀ v, inputs × B
};

}  // namespace rwd::nn
