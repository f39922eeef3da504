// rewind/neural/neural_sde.hpp — a neural SDE: the neural ODE's network as the drift, plus a
// learnable diagonal noise level, batched, as an rwd::SdeProblem for rwd::StochasticStepper.
//
//   dy_i = mlp(φ(y); θ_net)_i dt + σ_i dW_i,   σ_i = exp(s_i),   i = 0..D−1,
//
// for each of B samples at once (sample b's D components at [b·D, (b+1)·D), as in NeuralOde).
// θ is one flat vector: the network's P parameters followed by the D log noise levels,
// θ = [θ_net, s], so an adjoint driver's dJ/dθ holds the network's gradient and then dJ/ds, and
// one optimizer updates both.
//
//   rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
//   rwd::nn::NeuralSde model(mlp, /*batch=*/200, rwd::nn::InputFeatures::cube);
//   Eigen::VectorXd theta = model.initial_parameters(/*seed=*/1, /*sigma=*/0.1);
//   rwd::StochasticStepper stepper(model, rwd::SdeScheme::euler_maruyama,
//                                  rwd::StepControl::fixed(0.0, 0.025, 10), /*noise seed=*/7);
//   rwd::StoreAllAdjoint driver(stepper, objective);          // exact pathwise gradient
//   Eigen::VectorXd sigma = model.noise_levels(theta);         // exp(s), D values
//
// Why additive noise (g independent of y): it is the standard baseline of latent and neural SDEs
// (a learnable noise scale per output, as in Li et al., "Scalable Gradients for Stochastic
// Differential Equations", AISTATS 2020, and Kidger et al., "Neural SDEs as Infinite-Dimensional
// GANs", ICML 2021, before state-dependent diffusions), and for additive noise the derivative-free
// Milstein scheme equals Euler–Maruyama — its correction (g(ŷ) − g(y)) vanishes exactly — so
// Euler–Maruyama is already strong order 1 and nothing is gained by a costlier scheme. The noise
// level is learned on a log scale so that it stays positive under any optimizer step.
//
// Derivatives (exact, no finite differences anywhere):
//   drift:     the neural ODE's VJP (NeuralOde::vjp, by composition) for (∂f/∂y)ᵀv and the
//              network block of (∂f/∂θ)ᵀv; f does not depend on s, so that block is 0;
//   diffusion: (∂g/∂y)ᵀv = 0, (∂g/∂θ_net)ᵀv = 0 and (∂g/∂s_i)ᵀv = σ_i Σ_b v_{b·D+i}, the sum over
//              the batch in sample order (a plain loop: the same bits for any thread count).
//
// Not thread-safe, like NeuralOde: rhs and vjp share preallocated work vectors (they never
// allocate); give each thread its own NeuralSde.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

class NeuralSde {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "neural-sde";

  // The network must map D values to D values (NeuralOde checks it); batch >= 1.
  NeuralSde(Mlp mlp, Index batch, InputFeatures features = InputFeatures::identity)
      : drift_(std::move(mlp), batch, features),
        network_theta_(drift_.parameter_size()),
        network_grad_(drift_.parameter_size()) {}

  Index dimension() const { return drift_.dimension(); }
  Index batch() const { return drift_.batch(); }
  Index state_size() const { return drift_.state_size(); }
  Index noise_size() const { return state_size(); }  // diagonal noise: one W per component
  // The network's parameters (P), then one log noise level per dimension (D).
  Index network_parameter_size() const { return drift_.parameter_size(); }
  Index parameter_size() const { return network_parameter_size() + dimension(); }
  const Mlp& network() const { return drift_.network(); }
  InputFeatures features() const { return drift_.features(); }
  // The drift on its own: a neural ODE over the network's parameters θ_net.
  const NeuralOde& drift() const { return drift_; }

  std::string describe() const {
    return "neural SDE " + network().describe() + " on " + std::string(to_string(features())) +
           " features, additive noise, batch " + std::to_string(batch());
  }

  // θ = [the network's initial parameters for `seed`, log(sigma) in every dimension].
  Vector initial_parameters(std::uint64_t seed, double sigma) const {
    if (!(sigma > 0.0) || !std::isfinite(sigma))
      rwd::detail::fail<InvalidArgument>(name, ": initial noise level sigma = ", sigma,
                                         " must be finite and > 0");
    Vector theta(parameter_size());
    theta.head(network_parameter_size()) = network().initial_parameters(seed);
    theta.tail(dimension()).setConstant(std::log(sigma));
    return theta;
  }

  // σ = exp(s): the D noise levels of θ, the bits diffusion() uses (std::exp, not Eigen's
  // vectorised exp, which may differ in the last bit).
  Vector noise_levels(const Vector& theta) const {
    check_parameters(theta);
    Vector sigma(dimension());
    for (Index i = 0; i < dimension(); ++i)
      sigma[i] = std::exp(theta[network_parameter_size() + i]);
    return sigma;
  }

  // f = mlp(φ(y); θ_net) for every sample.
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    split_parameters(theta);
    drift_.rhs(t, y, network_theta_, f);
  }

  // out_y = (∂f/∂y)ᵀv, out_theta = [(∂f/∂θ_net)ᵀv, 0].
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    check_output(out_theta, "vjp");
    split_parameters(theta);
    drift_.vjp(t, y, network_theta_, v, out_y, network_grad_);
    out_theta.head(network_parameter_size()) = network_grad_;
    out_theta.tail(dimension()).setZero();
  }

  // g_{b·D+i} = σ_i = exp(s_i) for every sample b.
  void diffusion(double, const Vector& y, const Vector& theta, Vector& g) const {
    check_state(y, g.size(), "output g");
    check_parameters(theta);
    const Index d = dimension();
    for (Index i = 0; i < d; ++i) {
      const double sigma = std::exp(theta[network_parameter_size() + i]);
      for (Index b = 0; b < batch(); ++b) g[b * d + i] = sigma;
    }
  }

  // out_y = 0, out_theta = [0, (σ_i Σ_b v_{b·D+i})_i].
  void diffusion_vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
                     Vector& out_theta) const {
    check_state(y, v.size(), "cotangent v");
    check_parameters(theta);
    check_output(out_theta, "diffusion_vjp");
    if (out_y.size() != state_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": diffusion_vjp output out_y has ",
                                         out_y.size(), " elements but must have ", state_size());
    out_y.setZero();
    const Index p = network_parameter_size(), d = dimension();
    out_theta.head(p).setZero();
    for (Index i = 0; i < d; ++i) {
      double sum = 0.0;
      for (Index b = 0; b < batch(); ++b) sum += v[b * d + i];
      out_theta[p + i] = std::exp(theta[p + i]) * sum;
    }
  }

 private:
  void check_parameters(const Vector& theta) const {
    if (theta.size() != parameter_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": parameter vector theta has ", theta.size(),
                                         " elements but the model takes ", parameter_size(), " (",
                                         network_parameter_size(), " network parameters and ",
                                         dimension(), " log noise levels)");
  }

  void check_state(const Vector& y, Eigen::Index other, const char* what) const {
    if (y.size() != state_size() || other != state_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": state y and ", what, " have ", y.size(),
                                         " and ", other, " elements but must have ", state_size(),
                                         " (", dimension(), " × batch ", batch(), ")");
  }

  void check_output(const Vector& out_theta, const char* what) const {
    if (out_theta.size() != parameter_size())
      rwd::detail::fail<InvalidArgument>(describe(), ": ", what, " output out_theta has ",
                                         out_theta.size(), " elements but must have ",
                                         parameter_size());
  }

  // θ_net into its own vector, for the neural ODE (a copy of P values into preallocated memory).
  void split_parameters(const Vector& theta) const {
    check_parameters(theta);
    network_theta_ = theta.head(network_parameter_size());
  }

  NeuralOde drift_;
  mutable Vector network_theta_;  // θ_net, P values
  mutable Vector network_grad_;   // (∂f/∂θ_net)ᵀv, P values
};

}  // namespace rwd::nn
