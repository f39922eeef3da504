// src/neural/src/adam.cpp — Adam (Kingma & Ba 2015) with decoupled weight decay (AdamW, Loshchilov
// & Hutter 2019); see rewind/neural/adam.hpp.
#include "rewind/neural/adam.hpp"

#include <cmath>
#include <sstream>

#include "rewind/error.hpp"

namespace rwd::training {

void AdamOptions::validate() const {
  using rwd::detail::fail;
  if (!(std::isfinite(learning_rate) && learning_rate > 0.0))
    fail<InvalidArgument>("Adam: learning_rate = ", learning_rate, " must be finite and > 0");
  if (!(beta1 >= 0.0 && beta1 < 1.0))
    fail<InvalidArgument>("Adam: beta1 = ", beta1, " must be in [0, 1)");
  if (!(beta2 >= 0.0 && beta2 < 1.0))
    fail<InvalidArgument>("Adam: beta2 = ", beta2, " must be in [0, 1)");
  if (!(std::isfinite(epsilon) && epsilon > 0.0))
    fail<InvalidArgument>("Adam: epsilon = ", epsilon, " must be finite and > 0");
  if (!(std::isfinite(weight_decay) && weight_decay >= 0.0))
    fail<InvalidArgument>("Adam: weight_decay = ", weight_decay, " must be finite and >= 0");
  if (!(learning_rate * weight_decay < 1.0))
    fail<InvalidArgument>(
        "Adam: learning_rate * weight_decay = ", learning_rate * weight_decay,
        " must be < 1 (each step multiplies theta by 1 - learning_rate * weight_decay)");
}

Adam::Adam(AdamOptions options) : options_(options) {
  options_.validate();
}

void Adam::step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  detail::check_update("Adam", theta, gradient, t_ > 0 ? m_.size() : 0);
  const Index n = theta.size();
  if (t_ == 0) {  // a fresh run: zero moments, reusing the memory when the size is unchanged
    if (m_.size() != n) {
      m_.resize(n);
      v_.resize(n);
    }
    m_.setZero();
    v_.setZero();
    beta1_power_ = 1.0;
    beta2_power_ = 1.0;
  }
  ++t_;
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  const double lr = options_.learning_rate, epsilon = options_.epsilon;
  beta1_power_ *= beta1;
  beta2_power_ *= beta2;
  const double correction1 = 1.0 - beta1_power_;  // bias corrections (Kingma & Ba 2015, §3)
  const double correction2 = 1.0 - beta2_power_;
  const double decay = 1.0 - lr * options_.weight_decay;  // exactly 1 without weight decay
  double* m = m_.data();
  double* v = v_.data();
  double* x = theta.data();
  const double* g = gradient.data();
  for (Index i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0 - beta2) * (g[i] * g[i]);
    const double m_hat = m[i] / correction1;
    const double v_hat = v[i] / correction2;
    x[i] = decay * x[i] - lr * m_hat / (std::sqrt(v_hat) + epsilon);
  }
}

std::string Adam::name() const {
  const AdamOptions defaults;
  std::ostringstream s;
  s << "adam(lr = " << options_.learning_rate;
  if (options_.beta1 != defaults.beta1 || options_.beta2 != defaults.beta2)
    s << ", betas = (" << options_.beta1 << ", " << options_.beta2 << ")";
  if (options_.epsilon != defaults.epsilon) s << ", eps = " << options_.epsilon;
  if (options_.weight_decay > 0.0) s << ", weight decay = " << options_.weight_decay;
  s << ")";
  return s.str();
}

void Adam::reset() {
  t_ = 0;
}  // the moments are zeroed by the next step, in place

void Adam::set_learning_rate(double learning_rate) {
  AdamOptions changed = options_;
  changed.learning_rate = learning_rate;
  changed.validate();
  options_ = changed;
}

}  // namespace rwd::training

namespace rwd::training {

OptimizerState Adam::state() const {
  OptimizerState state{"adam", t_, {}};
  if (t_ > 0) state.vectors = {m_, v_};
  return state;
}

void Adam::restore(const OptimizerState& state) {
  using rwd::detail::fail;
  if (state.kind != "adam")
    fail<InvalidArgument>("Adam: cannot restore the state of a '", state.kind, "' optimizer");
  if (state.steps < 0) fail<InvalidArgument>("Adam: restored step count ", state.steps, " < 0");
  const std::size_t expected = state.steps > 0 ? 2 : 0;
  if (state.vectors.size() != expected ||
      (expected == 2 && state.vectors[0].size() != state.vectors[1].size()))
    fail<InvalidArgument>("Adam: a state after ", state.steps,
                          " steps needs two moment vectors of one size (m and v), not ",
                          state.vectors.size());
  t_ = state.steps;
  if (t_ > 0) {
    m_ = state.vectors[0];
    v_ = state.vectors[1];
  }
  // The running products, by the very multiplications step() made.
  beta1_power_ = 1.0;
  beta2_power_ = 1.0;
  for (Index i = 0; i < t_; ++i) {
    beta1_power_ *= options_.beta1;
    beta2_power_ *= options_.beta2;
  }
}

}  // namespace rwd::training
