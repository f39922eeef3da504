// rewind/neural/sgd.hpp — stochastic gradient descent, optionally with heavy-ball or Nesterov
// momentum, in the form PyTorch's SGD uses (no dampening), with velocity u starting at 0:
//
//   plain      (momentum = 0):  θ ← θ − lr g
//   momentum   (μ = momentum):  u ← μ u + g,   θ ← θ − lr u
//   Nesterov   (nesterov):      u ← μ u + g,   θ ← θ − lr (g + μ u)
//
//   rwd::training::SgdOptions options;
//   options.learning_rate = 1e-2;
//   options.momentum = 0.9;
//   rwd::training::Sgd sgd(options);
//   sgd.step(theta, gradient);
#pragma once

#include <string>

#include <Eigen/Dense>

#include "rewind/neural/optimizer.hpp"

namespace rwd::training {

struct SgdOptions {
  double learning_rate = 1e-2;  // step size; finite, > 0
  double momentum = 0.0;        // μ, weight of the previous velocity; in [0, 1)
  bool nesterov = false;        // Nesterov's look-ahead form; needs momentum > 0
  // Throws rwd::InvalidArgument naming the first field that breaks its rule.
  void validate() const;
};

class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options = {});
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) override;
  std::string name() const override;
  Index iterations() const override { return t_; }
  void reset() override;

  const SgdOptions& options() const { return options_; }
  double learning_rate() const override { return options_.learning_rate; }
  void set_learning_rate(double learning_rate) override;
  OptimizerState state() const override;
  void restore(const OptimizerState& state) override;
  // The velocity after the last step (empty without momentum or before the first step).
  const Eigen::VectorXd& velocity() const { return velocity_; }

 private:
  SgdOptions options_;
  Eigen::VectorXd velocity_;  // only with momentum; sized on the first step for a given size
  Index size_ = 0;            // parameter size of the current run (0: none yet)
  Index t_ = 0;
};

}  // namespace rwd::training
