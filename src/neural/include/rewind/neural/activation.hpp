// rewind/neural/activation.hpp — the elementwise nonlinearities of rwd::nn::Mlp and their exact
// derivatives.
//
//   identity  x
//   tanh      tanh x                    vectorised, within a few ulp of std::tanh
//   relu      max(0, x)                 derivative 1 for x > 0, else 0 (the usual convention at 0)
//   softplus  log(1 + eˣ)               computed without overflow for large |x|
//   gelu      x Φ(x), Φ the standard normal CDF — the exact erf form of Hendrycks & Gimpel
//             (2016), not the tanh approximation
//
//   rwd::nn::Activation a = rwd::nn::parse_activation("gelu");   // from a command line or file
//   rwd::nn::apply_activation(a, Z, A);                           // A = σ(Z), elementwise
//   rwd::nn::multiply_by_derivative(a, Z, A, G);                  // G ⊙= σ'(Z)
//
// Both functions are allocation-free and deterministic (same bits on every call); the
// derivatives are closed forms (exact to round-off), not difference quotients.
#pragma once

#include <string_view>

#include <Eigen/Dense>

namespace rwd::nn {

enum class Activation { identity, tanh, relu, softplus, gelu };

// "identity" (or "linear"), "tanh", "relu", "softplus", "gelu"; rwd::InvalidArgument otherwise.
Activation parse_activation(std::string_view name);
std::string_view to_string(Activation activation);

// out = σ(pre), elementwise; out and pre have the same shape (out may not alias pre).
void apply_activation(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                      Eigen::Ref<Eigen::MatrixXd> out);

// grad ⊙= σ'(pre), elementwise: turns ∂L/∂(activation output) into ∂L/∂(pre-activation).
// post = σ(pre) as apply_activation computed it (tanh's derivative is 1 − post²).
void multiply_by_derivative(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                            const Eigen::Ref<const Eigen::MatrixXd>& post,
                            Eigen::Ref<Eigen::MatrixXd> grad);

}  // namespace rwd::nn
