// src/nn/activation.cpp — see rewind/nn/activation.hpp.
#include "rewind/nn/activation.hpp"

#include <cmath>

#include "rewind/error.hpp"

namespace rwd::nn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)

// log(1 + eˣ) = max(x, 0) + log1p(e^{−|x|}): no overflow for large x, full precision for
// very negative x.
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
// d/dx softplus = logistic(x), evaluated on the side where exp does not overflow.
double logistic(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}
double normal_cdf(double x) { return 0.5 * std::erfc(-x * kInvSqrt2); }
double normal_pdf(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }

}  // namespace

Activation parse_activation(std::string_view name) {
  if (name == "identity" || name == "linear") return Activation::identity;
  if (name == "tanh") return Activation::tanh;
  if (name == "relu") return Activation::relu;
  if (name == "softplus") return Activation::softplus;
  if (name == "gelu") return Activation::gelu;
  detail::fail<InvalidArgument>("unknown activation '", name, "' (known: identity, tanh, relu, softplus, gelu)");
}

std::string_view to_string(Activation activation) {
  switch (activation) {
    case Activation::identity: return "identity";
    case Activation::tanh: return "tanh";
    case Activation::relu: return "relu";
    case Activation::softplus: return "softplus";
    case Activation::gelu: return "gelu";
  }
  return "?";
}

void apply_activation(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                      Eigen::Ref<Eigen::MatrixXd> out) {
  switch (activation) {
    case Activation::identity: out = pre; return;
    case Activation::tanh: out = pre.array().tanh().matrix(); return;
    case Activation::relu: out = pre.array().max(0.0).matrix(); return;
    case Activation::softplus: out = pre.unaryExpr([](double x) { return softplus(x); }); return;
    case Activation::gelu: out = pre.unaryExpr([](double x) { return x * normal_cdf(x); }); return;
  }
}

void multiply_by_derivative(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                            Eigen::Ref<Eigen::MatrixXd> grad) {
  switch (activation) {
    case Activation::identity: return;
    case Activation::tanh:
      // 1 − tanh²x, recomputed from the pre-activation (the output is not kept).
      grad.array() *= 1.0 - pre.array().tanh().square();
      return;
    case Activation::relu: grad.array() *= (pre.array() > 0.0).cast<double>(); return;
    case Activation::softplus:
      grad.array() *= pre.unaryExpr([](double x) { return logistic(x); }).array();
      return;
    case Activation::gelu:
      // d/dx x Φ(x) = Φ(x) + x φ(x).
      grad.array() *= pre.unaryExpr([](double x) { return normal_cdf(x) + x * normal_pdf(x); }).array();
      return;
  }
}

}  // namespace rwd::nn
