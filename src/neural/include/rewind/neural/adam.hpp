// rewind/neural/adam.hpp — Adam with bias correction (Kingma & Ba, "Adam: A Method for
// Stochastic Optimization", ICLR 2015, Algorithm 1) and optional decoupled weight decay (AdamW:
// Loshchilov & Hutter, "Decoupled Weight Decay Regularization", ICLR 2019, Algorithm 2).
//
// Step t = 1, 2, … with gradient g, elementwise:
//   m ← β₁ m + (1 − β₁) g                  m̂ = m / (1 − β₁ᵗ)
//   v ← β₂ v + (1 − β₂) g²                 v̂ = v / (1 − β₂ᵗ)
//   θ ← (1 − lr·λ) θ − lr · m̂ / (√v̂ + ε)     (λ = weight_decay)
//
// The decay multiplies θ directly instead of being added to g, so it does not pass through the
// adaptive scaling (that is what "decoupled" means). As in PyTorch's AdamW it is scaled by the
// learning rate: the paper's λ (with schedule multiplier η_t = 1) is lr·weight_decay here.
// β₁ᵗ and β₂ᵗ are kept as running products (one multiplication per step), so the bits do not
// depend on the platform's pow().
//
//   rwd::training::AdamOptions options;
//   options.learning_rate = 1e-2;
//   options.weight_decay = 1e-4;     // AdamW
//   rwd::training::Adam adam(options);
//   adam.step(theta, gradient);
#pragma once

#include <string>

#include <Eigen/Dense>

#include "rewind/neural/optimizer.hpp"

namespace rwd::training {

struct AdamOptions {
  double learning_rate = 1e-3;  // α, step size; finite, > 0
  double beta1 = 0.9;           // decay rate of the first-moment (mean) estimate; in [0, 1)
  double beta2 = 0.999;  // decay rate of the second-moment (uncentred variance) estimate; in [0, 1)
  double epsilon = 1e-8;      // added to √v̂ against division by zero; finite, > 0
  double weight_decay = 0.0;  // λ, decoupled (AdamW); finite, >= 0, and learning_rate·λ < 1
  // Throws rwd::InvalidArgument naming the first field that breaks its rule.
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
  double learning_rate() const override { return options_.learning_rate; }
  void set_learning_rate(double learning_rate) override;
  OptimizerState state() const override;
  // β₁ᵗ and β₂ᵗ are recomputed by the same t multiplications the steps made: the same bits.
  void restore(const OptimizerState& state) override;
  // The moment estimates after the last step (empty before the first step).
  const Eigen::VectorXd& first_moment() const { return m_; }
  const Eigen::VectorXd& second_moment() const { return v_; }

 private:
  AdamOptions options_;
  Eigen::VectorXd m_, v_;     // sized on the first step for a given size, reused after reset()
  double beta1_power_ = 1.0;  // β₁ᵗ
  double beta2_power_ = 1.0;  // β₂ᵗ
  Index t_ = 0;
};

}  // namespace rwd::training
