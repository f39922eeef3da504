// src/neural/src/activation.cpp — see rewind/neural/activation.hpp.
#include "rewind/neural/activation.hpp"

#include <algorithm>
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

// tanh of a whole array, four values at a time in GCC's generic vectors (one AVX2 register in
// the AVX2 clone, two SSE2 registers in the baseline one; the tail runs the same arithmetic in
// one lane). Written as vectors because g++ 12 does not vectorise the scalar loop: the clamp and
// the sign make "control flow" in its eyes, and the loop had run one value at a time, a quarter
// of a small network's training iteration.
//
// tanh|x| = e / (e + 2) with e = expm1(2|x|), the sign of x put back: one form for every x, no
// series near 0 and no cancellation there (for small x, e is computed to full relative
// precision and e + 2 ≈ 2). expm1(z) = 2^k (e^r − 1) + (2^k − 1) with k the integer nearest
// z/ln 2 and r = z − k ln 2 (ln 2 in two parts, Cody & Waite, so that k·ln2_hi is exact);
// e^r − 1 by its Taylor series to r¹³ without the constant term (|r| ≤ ln 2 / 2: first omitted
// term below 1e-17 relative), 2^k built from its exponent bits; for k = 0 the second term is
// exactly 0. z is clamped to 40: from there on 2/(e + 2) < 1e-17 and tanh rounds to exactly
// ±1, as it would with the exact e. Within a few ulp of tanh (Activation tests), the same bits
// on every call, in every lane and in every SIMD clone (IEEE products, sums and one division
// per value, no FMA), NaN stays NaN and −0 stays −0.
using Vec4 = double __attribute__((vector_size(4 * sizeof(double))));
using Bits4 = std::uint64_t __attribute__((vector_size(4 * sizeof(double))));
using Vec1 = double __attribute__((vector_size(sizeof(double))));
using Bits1 = std::uint64_t __attribute__((vector_size(sizeof(double))));

// y[0 .. lanes) = tanh x[0 .. lanes); V holds the lanes, Bits their bits. (Pointers in and
// out, not vectors: a function passing AVX vectors by value would have another ABI in the
// baseline clone.)
template <class V, class Bits>
[[gnu::always_inline]] inline void tanh_lanes(const double* __restrict in, double* __restrict y) {
  // 1/k! for e^r − 1.
  constexpr double f2 = 1.0 / 2, f3 = 1.0 / 6, f4 = 1.0 / 24, f5 = 1.0 / 120, f6 = 1.0 / 720,
                   f7 = 1.0 / 5040, f8 = 1.0 / 40320, f9 = 1.0 / 362880, f10 = 1.0 / 3628800,
                   f11 = 1.0 / 39916800, f12 = 1.0 / 479001600, f13 = 1.0 / 6227020800;
  constexpr double kLog2e = 1.4426950408889634074;          // 1 / ln 2
  constexpr double kLn2Hi = 6.93147180369123816490e-01;     // ln 2, 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;     // ln 2 − kLn2Hi
  constexpr double kRound = 0x1.8p52;                       // x + kRound − kRound: x rounded
  constexpr std::uint64_t kRoundBits = 0x4338000000000000;  // kRound's bits
  constexpr std::uint64_t kSignBit = 0x8000000000000000;
  constexpr double kClamp = 40.0;
  V x;
  __builtin_memcpy(&x, in, sizeof x);
  const Bits x_bits = __builtin_bit_cast(Bits, x);
  const Bits sign = x_bits & kSignBit;
  const V z2 = 2.0 * __builtin_bit_cast(V, x_bits & ~kSignBit);
  // min(z2, 40) as a mask (a NaN compares false and stays): no ?: on vectors, which not every
  // compiler accepts.
  const Bits over = (Bits)(z2 > kClamp);
  const V z = __builtin_bit_cast(
      V, (over & __builtin_bit_cast(Bits, V{} + kClamp)) | (~over & __builtin_bit_cast(Bits, z2)));
  const V t = z * kLog2e + kRound;  // k in its low bits
  const V k = t - kRound;
  const V r = (z - k * kLn2Hi) - k * kLn2Lo;
  // In r² with pairs of terms (two chains of half the length: latency, not operations, bounds
  // a chain of dependent products).
  const V r2 = r * r;
  const V er_minus_1 =
      (((((((f13 * r + f12) * r2 + (f11 * r + f10)) * r2 + (f9 * r + f8)) * r2 + (f7 * r + f6)) *
             r2 +
         (f5 * r + f4)) *
            r2 +
        (f3 * r + f2)) *
       r2) +
      r;
  const V two_k = __builtin_bit_cast(V, (__builtin_bit_cast(Bits, t) - kRoundBits + 1023) << 52);
  const V e = two_k * er_minus_1 + (two_k - 1.0);
  const V result = __builtin_bit_cast(V, __builtin_bit_cast(Bits, e / (e + 2.0)) | sign);
  __builtin_memcpy(y, &result, sizeof result);
}

REWIND_SIMD_CLONES
void tanh_column(const double* __restrict x, double* __restrict y, Index rows) {
  Index i = 0;
  for (; i + 4 <= rows; i += 4) tanh_lanes<Vec4, Bits4>(x + i, y + i);
  for (; i < rows; ++i) tanh_lanes<Vec1, Bits1>(x + i, y + i);
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
