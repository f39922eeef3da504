// src/training/optimizers.cpp — Adam and SGD; see rewind/training/adam.hpp and sgd.hpp.
#include <cmath>
#include <sstream>

#include "rewind/error.hpp"
#include "rewind/training/adam.hpp"
#include "rewind/training/sgd.hpp"

namespace rwd::training {

void detail::check_update(const char* optimizer, const Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  if (gradient.size() != theta.size())
    rwd::detail::fail<InvalidArgument>(optimizer, ": the gradient has ", gradient.size(),
                                       " values but the parameters ", theta.size());
  if (!gradient.allFinite()) {
    Index i = 0;
    while (i < gradient.size() && std::isfinite(gradient[i])) ++i;
    rwd::detail::fail<NumericalError>(optimizer, ": the gradient has a non-finite value (", gradient[i],
                                      " at index ", i, "); the parameters were not changed");
  }
}

void AdamOptions::validate() const {
  if (!(learning_rate > 0.0)) rwd::detail::fail<InvalidArgument>("Adam: learning_rate = ", learning_rate, " must be > 0");
  if (!(beta1 >= 0.0 && beta1 < 1.0)) rwd::detail::fail<InvalidArgument>("Adam: beta1 = ", beta1, " must be in [0, 1)");
  if (!(beta2 >= 0.0 && beta2 < 1.0)) rwd::detail::fail<InvalidArgument>("Adam: beta2 = ", beta2, " must be in [0, 1)");
  if (!(epsilon > 0.0)) rwd::detail::fail<InvalidArgument>("Adam: epsilon = ", epsilon, " must be > 0");
  if (!(weight_decay >= 0.0)) rwd::detail::fail<InvalidArgument>("Adam: weight_decay = ", weight_decay, " must be >= 0");
}

Adam::Adam(AdamOptions options) : options_(options) { options_.validate(); }

void Adam::step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  detail::check_update("Adam", theta, gradient);
  if (m_.size() != theta.size()) {
    if (t_ > 0)
      rwd::detail::fail<InvalidArgument>("Adam: the parameters changed size from ", m_.size(), " to ", theta.size(),
                                         " between steps; call reset() first");
    m_ = Eigen::VectorXd::Zero(theta.size());
    v_ = Eigen::VectorXd::Zero(theta.size());
  }
  ++t_;
  const AdamOptions& o = options_;
  m_ = o.beta1 * m_ + (1.0 - o.beta1) * gradient;
  v_ = o.beta2 * v_ + (1.0 - o.beta2) * gradient.cwiseProduct(gradient);
  const double correction1 = 1.0 - std::pow(o.beta1, static_cast<double>(t_));
  const double correction2 = 1.0 - std::pow(o.beta2, static_cast<double>(t_));
  // Decoupled decay acts on θ before the moment step, with the same learning rate (AdamW).
  if (o.weight_decay > 0.0) theta *= 1.0 - o.learning_rate * o.weight_decay;
  theta.array() -= o.learning_rate * (m_.array() / correction1) / ((v_.array() / correction2).sqrt() + o.epsilon);
}

std::string Adam::name() const {
  std::ostringstream s;
  s << "adam(lr = " << options_.learning_rate;
  if (options_.weight_decay > 0.0) s << ", weight decay = " << options_.weight_decay;
  s << ")";
  return s.str();
}

void Adam::reset() {
  m_.resize(0);
  v_.resize(0);
  t_ = 0;
}

void SgdOptions::validate() const {
  if (!(learning_rate > 0.0)) rwd::detail::fail<InvalidArgument>("SGD: learning_rate = ", learning_rate, " must be > 0");
  if (!(momentum >= 0.0 && momentum < 1.0)) rwd::detail::fail<InvalidArgument>("SGD: momentum = ", momentum, " must be in [0, 1)");
  if (nesterov && momentum == 0.0) rwd::detail::fail<InvalidArgument>("SGD: Nesterov needs momentum > 0");
}

Sgd::Sgd(SgdOptions options) : options_(options) { options_.validate(); }

void Sgd::step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) {
  detail::check_update("SGD", theta, gradient);
  ++t_;
  if (options_.momentum == 0.0) {
    theta -= options_.learning_rate * gradient;
    return;
  }
  if (velocity_.size() != theta.size()) velocity_ = Eigen::VectorXd::Zero(theta.size());
  velocity_ = options_.momentum * velocity_ + gradient;
  if (options_.nesterov)
    theta -= options_.learning_rate * (gradient + options_.momentum * velocity_);
  else
    theta -= options_.learning_rate * velocity_;
}

std::string Sgd::name() const {
  std::ostringstream s;
  s << "sgd(lr = " << options_.learning_rate;
  if (options_.momentum > 0.0) s << ", momentum = " << options_.momentum << (options_.nesterov ? ", nesterov" : "");
  s << ")";
  return s.str();
}

void Sgd::reset() {
  velocity_.resize(0);
  t_ = 0;
}

}  // namespace rwd::training
