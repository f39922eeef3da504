// rewind/neural/neural_field.hpp — the right-hand side of a neural ODE fitted to data of any
// dimension: optional augmented components, optional time input, as a rwd::Problem.
//
//   dy/dt = mlp([φ(y); τ(t)]; θ)      y = (observed components, K augmented ones)
//
// The state has S = D + K components: the D observed ones and K extra ones that no observation
// sees (augmented neural ODEs, Dupont, Doucet & Teh, "Augmented Neural ODEs", NeurIPS 2019 —
// they start at zero and give the flow room to avoid crossing trajectories). φ is the elementwise
// feature map of neural_ode.hpp (identity or cube). With a time input the network also sees
// τ(t) = (t − shift) / scale, one more input row, so the field may change with t; a network of
// S + 1 inputs and S outputs. The parameter gradient includes the paths through t; the
// derivative with respect to t itself is not needed (the step times are fixed) and not formed.
//
//   rwd::nn::Mlp mlp({3 + 1, 64, 64, 3}, rwd::nn::Activation::tanh);   // S = 3, time input
//   rwd::nn::NeuralField field(mlp, rwd::nn::InputFeatures::identity, /*time_input=*/true,
//                              /*batch=*/1, /*time_shift=*/0.0, /*time_scale=*/10.0);
//   rwd::ExplicitRungeKutta stepper(field, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::prescribed(t0, step_sizes));
//
// A batch of B samples (state S·B, sample b at [b·S, (b+1)·S)) shares one t. The VJP is exact:
// the network's own VJP, the rows of the state taken from the input cotangent, the chain rule
// through φ. Not thread-safe (rhs and vjp share preallocated work matrices and never allocate);
// give each thread its own NeuralField.
#pragma once

#include <cmath>
#include <string>
#include <utility>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

class NeuralField {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "neural-field";

  NeuralField(Mlp mlp, InputFeatures features, bool time_input, Index batch = 1,
              double time_shift = 0.0, double time_scale = 1.0)
      : mlp_(std::move(mlp)),
        features_(features),
        time_input_(time_input),
        batch_(batch),
        time_shift_(time_shift),
        time_scale_(time_scale),
        workspace_(mlp_.make_workspace(batch < 1 ? 1 : batch)) {
    const Index extra = time_input_ ? 1 : 0;
    if (mlp_.input_size() != mlp_.output_size() + extra)
      rwd::detail::fail<InvalidArgument>(
          "a neural field ", time_input_ ? "with" : "without", " a time input needs a network of ",
          time_input_ ? "S + 1 inputs and S outputs" : "as many inputs as outputs", ", but ",
          mlp_.describe(), " maps ", mlp_.input_size(), " to ", mlp_.output_size());
    if (batch_ < 1) rwd::detail::fail<InvalidArgument>("neural field batch = ", batch_, " < 1");
    if (!(std::isfinite(time_shift_) && std::isfinite(time_scale_) && time_scale_ > 0.0))
      rwd::detail::fail<InvalidArgument>("neural field time scaling (t − ", time_shift_, ") / ",
                                         time_scale_, " needs a finite shift and a scale > 0");
    input_.setZero(mlp_.input_size(), batch_);
    grad_input_.resize(mlp_.input_size(), batch_);
  }

  Index dimension() const { return mlp_.output_size(); }  // S
  Index batch() const { return batch_; }
  Index state_size() const { return dimension() * batch_; }
  Index parameter_size() const { return mlp_.parameter_size(); }
  const Mlp& network() const { return mlp_; }
  InputFeatures features() const { return features_; }
  bool time_input() const { return time_input_; }
  double time_shift() const { return time_shift_; }
  double time_scale() const { return time_scale_; }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    check_sizes(y, theta, f.size(), "output f");
    fill_input(t, y);
    Eigen::Map<Eigen::MatrixXd> out(f.data(), dimension(), batch_);
    mlp_.forward(theta.data(), input_, out, workspace_);
  }

  // out_y = φ'(y) ⊙ (rows 0..S−1 of (∂mlp/∂input)ᵀ v);  out_theta = Σ_b (∂mlp/∂θ)ᵀ v_b.
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    check_sizes(y, theta, v.size(), "cotangent v");
    if (out_y.size() != y.size() || out_theta.size() != theta.size())
      rwd::detail::fail<InvalidArgument>("neural field vjp: outputs have ", out_y.size(), " and ",
                                         out_theta.size(), " elements but must have ", y.size(),
                                         " and ", theta.size());
    fill_input(t, y);
    const Eigen::Map<const Eigen::MatrixXd> cotangent(v.data(), dimension(), batch_);
    mlp_.vjp(theta.data(), input_, cotangent, grad_input_, out_theta.data(), workspace_);
    const Index s = dimension();
    Eigen::Map<Eigen::MatrixXd> gy(out_y.data(), s, batch_);
    const Eigen::Map<const Eigen::MatrixXd> state(y.data(), s, batch_);
    if (features_ == InputFeatures::cube)
      gy = (3.0 * state.array().square() * grad_input_.topRows(s).array()).matrix();
    else
      gy = grad_input_.topRows(s);
  }

 private:
  void check_sizes(const Vector& y, const Vector& theta, Eigen::Index third,
                   const char* what) const {
    if (y.size() != state_size() || third != state_size())
      rwd::detail::fail<InvalidArgument>("neural field ", mlp_.describe(), ": state y and ", what,
                                         " have ", y.size(), " and ", third,
                                         " elements but must have ", state_size());
    if (theta.size() != parameter_size())
      rwd::detail::fail<InvalidArgument>("neural field ", mlp_.describe(), ": theta has ",
                                         theta.size(), " elements but the network takes ",
                                         parameter_size());
  }

  // [φ(y); τ(t)] into input_ (S (+1) × B).
  void fill_input(double t, const Vector& y) const {
    const Index s = dimension();
    const Eigen::Map<const Eigen::MatrixXd> state(y.data(), s, batch_);
    if (features_ == InputFeatures::cube)
      input_.topRows(s) = state.array().cube().matrix();
    else
      input_.topRows(s) = state;
    if (time_input_) input_.row(s).setConstant((t - time_shift_) / time_scale_);
  }

  Mlp mlp_;
  InputFeatures features_;
  bool time_input_;
  Index batch_;
  double time_shift_, time_scale_;
  mutable Mlp::Workspace workspace_;
  mutable Eigen::MatrixXd input_;       // [φ(y); τ(t)], (S + time) × B
  mutable Eigen::MatrixXd grad_input_;  // (∂mlp/∂input)ᵀ v
};

}  // namespace rwd::nn
