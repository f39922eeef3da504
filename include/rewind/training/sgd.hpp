// rewind/training/sgd.hpp — stochastic gradient descent with optional (Nesterov) momentum.
//
//   plain:     θ ← θ − lr g
//   momentum:  u ← μ u + g,  θ ← θ − lr u                  (the form PyTorch uses)
//   Nesterov:  u ← μ u + g,  θ ← θ − lr (g + μ u)
#pragma once

#include <string>

#include "rewind/training/optimizer.hpp"

namespace rwd::training {

struct SgdOptions {
  double learning_rate = 1e-2;  // > 0
  double momentum = 0.0;        // in [0, 1)
  bool nesterov = false;        // needs momentum > 0
  void validate() const;
};

class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options = {});
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) override;
  std::string name() const override;
  Index iterations() const override { return t_; }
  void reset() override;

 private:
  SgdOptions options_;
  Eigen::VectorXd velocity_;
  Index t_ = 0;
};

}  // namespace rwd::training
