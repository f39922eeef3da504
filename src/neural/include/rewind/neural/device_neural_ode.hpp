// rewind/neural/device_neural_ode.hpp — rwd::nn::NeuralOde on a Thrust backend: the batched
// neural-ODE right-hand side with its state, parameters and network in the backend's memory (the
// GPU's under CUDA), as a rwd::Problem, so every integrator, schedule, store and adjoint driver
// runs it on the device unchanged.
//
//   dy/dt = mlp(φ(y); θ)      for each of B samples at once (φ: identity or y³)
//
//   rwd::nn::Mlp shape({3, 64, 64, 3}, rwd::nn::Activation::tanh);
//   rwd::nn::DeviceNeuralOde<rwd::ThrustBackend> model(shape, /*batch=*/4096);
//   auto theta = rwd::nn::DeviceNeuralOde<rwd::ThrustBackend>::parameters_from_host(
//       shape.initial_parameters(1));
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(), control);
//   rwd::StoreAllAdjoint driver(stepper, objective);    // the exact discrete adjoint, on the
//   device
//
// The state holds the B samples one after another (sample b's D components at [b·D, (b+1)·D)),
// a column-major D × B matrix, as NeuralOde's does; θ is the network's flat parameter vector in
// Mlp's layout. The results agree with NeuralOde (the CPU model) to round-off; on one device
// system the same inputs give the same bits on every call, so gradients are the same bits for
// every schedule and snapshot level (rewind/neural/device_mlp.hpp says how).
//
// The network's matrix products are rewind's own kernels or, on CUDA, cuBLAS where it can be
// loaded (DenseProducts, rewind/neural/device_mlp.hpp; network().products_note() says which).
//
// What NeuralOde has and this does not (yet): a time input, per-sample parameter copies, saved
// forward passes (each VJP re-runs its stage's forward pass). The time argument is ignored.
// vjp_accumulate adds the parameter part straight into μ (explicit Runge–Kutta steppers use it),
// the same bits as a buffer and then μ += buffer. Not thread-safe (shared work vectors).
#pragma once

#include <span>
#include <string>

#include "rewind/error.hpp"
#include "rewind/neural/device_dense_kernels.hpp"
#include "rewind/neural/device_mlp.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

template <class B>
class DeviceNeuralOde {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "neural-ode";

  DeviceNeuralOde(const Mlp& shape, Index batch, InputFeatures features = InputFeatures::identity,
                  DenseProducts products = DenseProducts::automatic)
      : net_(checked(shape, batch), batch, products), batch_(batch), features_(features) {
    const Index inputs = net_.input_size() * batch_;
    if (features_ == InputFeatures::cube) phi_ = B::zeros(inputs);
    grad_phi_ = B::zeros(inputs);
  }

  // A parameter vector (or any vector) in the backend's memory from host values.
  static Vector parameters_from_host(std::span<const double> host) {
    Vector v = B::zeros(static_cast<Index>(host.size()));
    B::copy_from_host(host, v);
    return v;
  }

  Index dimension() const { return net_.output_size(); }
  Index batch() const { return batch_; }
  Index state_size() const { return dimension() * batch_; }
  Index parameter_size() const { return net_.parameter_size(); }
  InputFeatures features() const { return features_; }
  const DeviceMlp<B>& network() const { return net_; }
  std::string describe() const {
    return "neural ODE " + net_.describe() + " on " + std::string(to_string(features_)) +
           " features, batch " + std::to_string(batch_) + ", " + B::name + " (" +
           to_string(net_.products()) + ")";
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    check_sizes(y, theta, B::size(f), "output f");
    net_.forward(B::data(theta), features_of(y), B::data(f), batch_);
  }

  // out_y = (∂f/∂y)ᵀ v = φ'(y) ⊙ (∂mlp/∂φ)ᵀ v;  out_theta = Σ_b (∂mlp/∂θ)ᵀ v_b.
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    reverse(y, theta, v, out_y, out_theta, /*accumulate=*/false);
  }

  // vjp with mu += out_theta instead of out_theta = (one pass, no buffer; the same bits).
  void vjp_accumulate(double /*t*/, const Vector& y, const Vector& theta, const Vector& v,
                      Vector& out_y, Vector& mu) const {
    reverse(y, theta, v, out_y, mu, /*accumulate=*/true);
  }

 private:
  static const Mlp& checked(const Mlp& shape, Index batch) {
    if (shape.input_size() != shape.output_size())
      detail::fail<InvalidArgument>(
          "a neural ODE needs a network whose output size equals its "
          "input size (",
          shape.describe(), " maps ", shape.input_size(), " to ", shape.output_size(), ")");
    if (batch < 1) detail::fail<InvalidArgument>("neural ODE batch = ", batch, " must be >= 1");
    return shape;
  }

  void reverse(const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
               Vector& theta_out, bool accumulate) const {
    check_sizes(y, theta, B::size(v), "cotangent v");
    if (B::size(out_y) != state_size() || B::size(theta_out) != parameter_size())
      detail::fail<InvalidArgument>(describe(), " vjp: outputs have ", B::size(out_y), " and ",
                                    B::size(theta_out), " elements but must have ", state_size(),
                                    " and ", parameter_size());
    const double* x = features_of(y);
    if (features_ == InputFeatures::cube) {
      net_.vjp(B::data(theta), x, B::data(v), B::data(grad_phi_), B::data(theta_out), batch_,
               accumulate);
      B::for_each_index(state_size(),
                        device_kernels::CubeChain{B::data(y), B::data(grad_phi_), B::data(out_y)});
    } else {
      net_.vjp(B::data(theta), x, B::data(v), B::data(out_y), B::data(theta_out), batch_,
               accumulate);
    }
  }

  void check_sizes(const Vector& y, const Vector& theta, Index third, const char* what) const {
    if (B::size(y) != state_size() || third != state_size())
      detail::fail<InvalidArgument>(describe(), ": state y and ", what, " have ", B::size(y),
                                    " and ", third, " elements but must have ", state_size(), " (",
                                    dimension(), " × batch ", batch_, ")");
    if (B::size(theta) != parameter_size())
      detail::fail<InvalidArgument>(describe(), ": parameter vector theta has ", B::size(theta),
                                    " elements but the network takes ", parameter_size());
  }

  // The network's input: the state itself (identity) or its cubes in phi_.
  const double* features_of(const Vector& y) const {
    if (features_ == InputFeatures::identity) return B::data(y);
    B::for_each_index(state_size(), device_kernels::Cube{B::data(y), B::data(phi_)});
    return B::data(phi_);
  }

  DeviceMlp<B> net_;
  Index batch_;
  InputFeatures features_;
  mutable Vector phi_;       // φ(y) (cube features only)
  mutable Vector grad_phi_;  // (∂mlp/∂φ)ᵀ v (cube features; identity writes out_y directly)
};

}  // namespace rwd::nn
