// src/neural/src/sgd.cpp — SGD with optional (Nesterov) momentum; see rewind/neural/sgd.hpp.
#include "rewind/neural/sgd.hpp"

#include <cmath>
#include <sstream>

#include "rewind/error.hpp"

namespace rwd::training {

void SgdOptions::validate() const {
  using rwd::detail::fail;
  if (!(std::isfinite(learning_rate) && learning_rate > 0.0))
    fail<InvalidArgument>("SGD: learning_rate = ", learning_rate, " must be finite and > 0");
  if (!(momentum >= 0.0 && momentum < 1.0))
    fail<InvalidArgument>("SGD: momentum = ", momentum, " must be in [0, 1)");
  if (nesterov && momentum == 0.0) fail<InvalidArgument>("SGD: nesterov = true needs momentum > 0");
}

Sgd::Sgd(SgdOptions options) : options_(options) {
  options_.validate();
}

void Sgd::step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  detail::check_update("SGD", theta, gradient, t_ > 0 ? size_ : 0);
  const Index n = theta.size();
  const double lr = options_.learning_rate, mu = options_.momentum;
  double* x = theta.data();
  const double* g = gradient.data();
  if (mu == 0.0) {
    for (Index i = 0; i < n; ++i) x[i] -= lr * g[i];
  } else {
    if (t_ == 0) {  // a fresh run: zero velocity, reusing the memory when the size is unchanged
      if (velocity_.size() != n) velocity_.resize(n);
      velocity_.setZero();
    }
    double* u = velocity_.data();
    if (options_.nesterov) {
      for (Index i = 0; i < n; ++i) {
        u[i] = mu * u[i] + g[i];
        x[i] -= lr * (g[i] + mu * u[i]);
      }
    } else {
      for (Index i = 0; i < n; ++i) {
        u[i] = mu * u[i] + g[i];
        x[i] -= lr * u[i];
      }
    }
  }
  size_ = n;
  ++t_;
}

std::string Sgd::name() const {
  std::ostringstream s;
  s << "sgd(lr = " << options_.learning_rate;
  if (options_.momentum > 0.0)
    s << ", momentum = " << options_.momentum << (options_.nesterov ? ", nesterov" : "");
  s << ")";
  return s.str();
}

void Sgd::reset() {
  t_ = 0;
  size_ = 0;
}

void Sgd::set_learning_rate(double learning_rate) {
  SgdOptions changed = options_;
  changed.learning_rate = learning_rate;
  changed.validate();
  options_ = changed;
}

}  // namespace rwd::training

namespace rwd::training {

OptimizerState Sgd::state() const {
  OptimizerState state{"sgd", t_, {}};
  if (t_ > 0 && options_.momentum != 0.0) state.vectors = {velocity_};
  return state;
}

void Sgd::restore(const OptimizerState& state) {
  using rwd::detail::fail;
  if (state.kind != "sgd")
    fail<InvalidArgument>("SGD: cannot restore the state of a '", state.kind, "' optimizer");
  if (state.steps < 0) fail<InvalidArgument>("SGD: restored step count ", state.steps, " < 0");
  const std::size_t expected = state.steps > 0 && options_.momentum != 0.0 ? 1 : 0;
  if (state.vectors.size() != expected)
    fail<InvalidArgument>("SGD: a state after ", state.steps, " steps with momentum ",
                          options_.momentum, " needs ", expected, " velocity vector(s), not ",
                          state.vectors.size());
  t_ = state.steps;
  size_ = expected == 1 ? state.vectors[0].size() : 0;
  if (expected == 1) velocity_ = state.vectors[0];
}

}  // namespace rwd::training
