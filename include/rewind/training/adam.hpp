// rewind/training/adam.hpp — Adam (Kingma & Ba 2015) with bias correction and optional
// decoupled weight decay (AdamW, Loshchilov & Hutter 2019).
//
//   m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²,
//   θ ← θ − lr · ( m/(1 − β₁ᵗ) / (√(v/(1 − β₂ᵗ)) + ε) + weight_decay · θ ).
#pragma once

#include <string>

#include "rewind/training/optimizer.hpp"

namespace rwd::training {

struct AdamOptions {
  double learning_rate = 1e-3;  // > 0
  double beta1 = 0.9;           // in [0, 1)
  double beta2 = 0.999;         // in [0, 1)
  double epsilon = 1e-8;        // > 0
  double weight_decay = 0.0;    // >= 0, decoupled from the gradient
  void validate() const;
};

class Adam : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});
  void step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) override;
  std::string name() const override;
  Index iterations() const override { return t_; }
  void reset() override;
  const AdamOptions& options() const { return options_; }

 private:
  AdamOptions options_;
  Eigen::VectorXd m_, v_;  // first and second moment estimates, sized on the first step
  Index t_ = 0;
};

}  // namespace rwd::training
