// rewind/training/optimizer.hpp — the interface of first-order optimizers (rwd::training::Adam,
// rwd::training::Sgd): θ ← update(θ, ∇J).
//
//   rwd::training::Adam adam({.learning_rate = 1e-2});
//   adam.step(theta, gradient);          // theta updated in place
//
// Every optimizer refuses a gradient of the wrong size or with NaN/Inf before touching θ (a
// non-finite gradient would otherwise poison θ and the optimizer's state for good), and is
// deterministic: the same gradients give the same bits.
#pragma once

#include <string>

#include <Eigen/Dense>

#include "rewind/types.hpp"

namespace rwd::training {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update of theta with the gradient of the loss at theta.
  virtual void step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) = 0;
  virtual std::string name() const = 0;  // e.g. "adam(lr = 0.01)"
  virtual Index iterations() const = 0;  // steps taken since construction or reset()
  virtual void reset() = 0;              // forget the state (moments, velocity)
};

namespace detail {
// The checks every optimizer runs before an update (see above).
void check_update(const char* optimizer, const Eigen::VectorXd& theta, const Eigen::VectorXd& gradient);
}  // namespace detail

}  // namespace rwd::training
