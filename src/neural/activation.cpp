// src/neural/activation.cpp — see rewind/neural/activation.hpp.
#include "rewind/neural/activation.hpp"

#include <algorithm>
#include <cmath>

#include "rewind/error.hpp"
#include "rewind/types.hpp"
#include "simd_clones.hpp"

namespace rwd::nn {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;    // 1/√2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)

// log(1 + eˣ) = max(x, 0) + log1p(e^{−|x|}): no overflow for large x, full precision for
// very negative x.
double softplus(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}
// d/dx softplus = logistic(x), evaluated on the side where exp does not overflow.
double logistic(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}
// GELU (Hendrycks & Gimpel 2016, "Gaussian Error Linear Units (GELUs)", arXiv:1606.08415) is
// x·Φ(x) with Φ the standard normal CDF. The exact erf form is used, not the paper's tanh
// approximation, so that the derivative below is the derivative of the function computed.
// Φ(x) = ½ erfc(−x/√2) rather than ½(1 + erf(x/√2)): no cancellation for very negative x.
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x * kInvSqrt2);
}
double normal_pdf(double x) {
  return kInvSqrt2Pi * std::exp(-0.5 * x * x);
}

// tanh of a whole array. The scalar libm tanh was most of the time of a small network's pass
// (68% of a spiral training iteration, measured with perf). For |x| ≥ 1/8,
// tanh|x| = 1 − 2/(1 + exp(2|x|)) loses at most three bits to cancellation (and is exactly 1 once
// exp overflows); below 1/8 the odd Taylor series to x¹⁹ is used, whose first omitted term is
// below 1e-19 relative. Both stay within a few ulp of tanh, give the same bits on every call
// (what replays need), and allocate nothing; the derivative uses 1 − tanh² of this value.
//
// Two passes over each column: the series for every value, a branch-free loop the compiler
// vectorises (the same IEEE products and sums lane by lane as one value at a time, so the same
// bits), then the exp form over the values with |x| ≥ 1/8, one at a time. (One pass choosing per
// value ran the series' chain of 20 dependent operations scalar, with a branch mispredicted
// whenever small and large values mix: 35% of a spiral iteration.) The arithmetic, operation by
// operation, is that of the Eigen expression this replaces —
//   (|x| < 1/8).select(x · horner(x²), sign(x) · (1 − 2/(1 + exp(2|x|))))
// — so the results did not move by a bit.
// The series pass over one column (see tanh_array).
REWIND_SIMD_CLONES
void tanh_series(const double* __restrict x, double* __restrict y, Index rows) {
  // tanh x = x Σ c_k x^{2k}, c_k = 2^{2k+2}(2^{2k+2} − 1) B_{2k+2} / (2k + 2)!.
  constexpr double c0 = 1.0, c1 = -1.0 / 3, c2 = 2.0 / 15, c3 = -17.0 / 315, c4 = 62.0 / 2835,
                   c5 = -1382.0 / 155925, c6 = 21844.0 / 6081075, c7 = -929569.0 / 638512875,
                   c8 = 6404582.0 / 10854718875, c9 = -443861162.0 / 1856156927625;
  for (Index i = 0; i < rows; ++i) {
    const double x2 = x[i] * x[i];
    // Horner's rule in x².
    // clang-format off
    y[i] = x[i] * (((((((((c9 * x2 + c8) * x2 + c7) * x2 + c6) * x2 + c5) * x2 + c4) * x2 + c3)
                      * x2 + c2) * x2 + c1) * x2 + c0);
    // clang-format on
  }
}

void tanh_array(const Eigen::Ref<const Eigen::MatrixXd>& pre, Eigen::Ref<Eigen::MatrixXd> out) {
  const Index rows = pre.rows();
  for (Index j = 0; j < pre.cols(); ++j) {
    const double* __restrict x = pre.col(j).data();
    double* __restrict y = out.col(j).data();
    tanh_series(x, y, rows);
    for (Index i = 0; i < rows; ++i) {
      const double a = std::abs(x[i]);
      if (a < 0.125) continue;  // NaN is not < 1/8: it takes the exp form, which keeps it NaN
      // sign(x) as Eigen defines it for reals: (x > 0) − (x < 0), 0 for NaN (0 · NaN is NaN).
      const double sign = static_cast<double>((x[i] > 0.0) - (x[i] < 0.0));
      y[i] = sign * (1.0 - 2.0 / (1.0 + std::exp(2.0 * a)));
    }
  }
}

}  // namespace

Activation parse_activation(std::string_view name) {
  if (name == "identity" || name == "linear") return Activation::identity;
  if (name == "tanh") return Activation::tanh;
  if (name == "relu") return Activation::relu;
  if (name == "softplus") return Activation::softplus;
  if (name == "gelu") return Activation::gelu;
  detail::fail<InvalidArgument>("unknown activation '", name,
                                "' (known: identity, tanh, relu, softplus, gelu)");
}

std::string_view to_string(Activation activation) {
  switch (activation) {
    case Activation::identity:
      return "identity";
    case Activation::tanh:
      return "tanh";
    case Activation::relu:
      return "relu";
    case Activation::softplus:
      return "softplus";
    case Activation::gelu:
      return "gelu";
  }
  return "?";
}

void apply_activation(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                      Eigen::Ref<Eigen::MatrixXd> out) {
  switch (activation) {
    case Activation::identity:
      out = pre;
      return;
    case Activation::tanh:
      tanh_array(pre, out);
      return;
    case Activation::relu:
      out = pre.array().max(0.0).matrix();
      return;
    case Activation::softplus:
      out = pre.unaryExpr([](double x) { return softplus(x); });
      return;
    case Activation::gelu:
      out = pre.unaryExpr([](double x) { return x * normal_cdf(x); });
      return;
  }
  detail::fail<InvalidArgument>("apply_activation: invalid activation (enum value ",
                                static_cast<int>(activation), ")");
}

void multiply_by_derivative(Activation activation, const Eigen::Ref<const Eigen::MatrixXd>& pre,
                            const Eigen::Ref<const Eigen::MatrixXd>& post,
                            Eigen::Ref<Eigen::MatrixXd> grad) {
  switch (activation) {
    case Activation::identity:
      return;
    case Activation::tanh:
      // 1 − tanh², from the output already computed: no second tanh.
      grad.array() *= 1.0 - post.array().square();
      return;
    case Activation::relu:
      grad.array() *= (pre.array() > 0.0).cast<double>();
      return;
    case Activation::softplus:
      grad.array() *= pre.unaryExpr([](double x) { return logistic(x); }).array();
      return;
    case Activation::gelu:
      // d/dx x Φ(x) = Φ(x) + x φ(x), φ the standard normal density (Hendrycks & Gimpel 2016).
      grad.array() *=
          pre.unaryExpr([](double x) { return normal_cdf(x) + x * normal_pdf(x); }).array();
      return;
  }
  detail::fail<InvalidArgument>("multiply_by_derivative: invalid activation (enum value ",
                                static_cast<int>(activation), ")");
}

}  // namespace rwd::nn
