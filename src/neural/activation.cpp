// src/neural/activation.cpp — see rewind/neural/activation.hpp.
#include "rewind/neural/activation.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "rewind/error.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

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

// tanh of a whole array, one branch-free pass per column that the compiler vectorises.
//
// Below |x| = 1/8 the odd Taylor series to x¹⁹ (first omitted term below 1e-19 relative); from
// 1/8 on tanh|x| = 1 − 2/(1 + e^{2|x|}), which loses at most three bits to cancellation, with
// the sign of x put back. Every value gets both forms and keeps one (a select, no branch): a
// branch mispredicted wherever small and large values mix, and the series' chain of 20
// dependent operations run one value at a time, had been a third of a small network's pass,
// and libm's exp, called once per value, a fifth of a larger one's. So exp is computed here in
// the same lanes: e^z = 2^k e^r with k the integer nearest z/ln 2 and r = z − k ln 2 (ln 2 in
// two parts, Cody & Waite, so that k·ln2_hi is exact), e^r by its Taylor series to r¹³ (|r| ≤
// ln 2 / 2: first omitted term below 1e-17 relative) and 2^k built from its exponent bits. z is
// clamped to 40: from there on 2/(1 + e^z) < 1e-17 and tanh rounds to exactly ±1, as it would
// with the exact e^z. Within a few ulp of tanh (Activation test), the same bits on every call
// and in every SIMD clone (IEEE products, sums and one division per value, no FMA), and NaN
// stays NaN (every form of a NaN is NaN).
REWIND_SIMD_CLONES
void tanh_column(const double* __restrict x, double* __restrict y, Index rows) {
  // tanh x = x Σ c_k x^{2k}, c_k = 2^{2k+2}(2^{2k+2} − 1) B_{2k+2} / (2k + 2)!.
  constexpr double c0 = 1.0, c1 = -1.0 / 3, c2 = 2.0 / 15, c3 = -17.0 / 315, c4 = 62.0 / 2835,
                   c5 = -1382.0 / 155925, c6 = 21844.0 / 6081075, c7 = -929569.0 / 638512875,
                   c8 = 6404582.0 / 10854718875, c9 = -443861162.0 / 1856156927625;
  // 1/k! for e^r.
  constexpr double f2 = 1.0 / 2, f3 = 1.0 / 6, f4 = 1.0 / 24, f5 = 1.0 / 120, f6 = 1.0 / 720,
                   f7 = 1.0 / 5040, f8 = 1.0 / 40320, f9 = 1.0 / 362880, f10 = 1.0 / 3628800,
                   f11 = 1.0 / 39916800, f12 = 1.0 / 479001600, f13 = 1.0 / 6227020800;
  constexpr double kLog2e = 1.4426950408889634074;          // 1 / ln 2
  constexpr double kLn2Hi = 6.93147180369123816490e-01;     // ln 2, 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;     // ln 2 − kLn2Hi
  constexpr double kRound = 0x1.8p52;                       // x + kRound − kRound: x rounded
  constexpr std::uint64_t kRoundBits = 0x4338000000000000;  // kRound's bits
  for (Index i = 0; i < rows; ++i) {
    const double xi = x[i];
    const double x2 = xi * xi;
    // In x⁴ with pairs of terms (two chains of half the length: the loop is bound by the
    // latency of its polynomial chains, not by their operations).
    const double x4 = x2 * x2;
    const double series =
        xi *
        ((((((c9 * x2 + c8) * x4 + (c7 * x2 + c6)) * x4 + (c5 * x2 + c4)) * x4 + (c3 * x2 + c2)) *
          x4) +
         (c1 * x2 + c0));
    const double a = std::abs(xi);
    const double z = std::min(2.0 * a, 40.0);
    const double t = z * kLog2e + kRound;  // k in its low bits
    const double k = t - kRound;
    const double r = (z - k * kLn2Hi) - k * kLn2Lo;
    // The same pairing in r².
    const double r2 = r * r;
    const double er =
        (((((((f13 * r + f12) * r2 + (f11 * r + f10)) * r2 + (f9 * r + f8)) * r2 + (f7 * r + f6)) *
               r2 +
           (f5 * r + f4)) *
              r2 +
          (f3 * r + f2)) *
         r2) +
        (r + 1.0);
    const double two_k =
        std::bit_cast<double>((std::bit_cast<std::uint64_t>(t) - kRoundBits + 1023) << 52);
    const double large = std::copysign(1.0 - 2.0 / (1.0 + er * two_k), xi);
    y[i] = a < 0.125 ? series : large;
  }
}

void tanh_array(const Eigen::Ref<const Eigen::MatrixXd>& pre, Eigen::Ref<Eigen::MatrixXd> out) {
  // Columns that lie one after another (a workspace's whole batch) are one array: one loop.
  if (pre.outerStride() == pre.rows() && out.outerStride() == out.rows()) {
    tanh_column(pre.data(), out.data(), pre.size());
    return;
  }
  for (Index j = 0; j < pre.cols(); ++j)
    tanh_column(pre.col(j).data(), out.col(j).data(), pre.rows());
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
