// tests/core/fixed_reduction_checks.hpp — ThrustBackend's reductions against an independent host
// fold of the decomposition that rewind/backend/thrust_fixed_reduction.hpp promises, for any
// Thrust device system (CPP and OMP in *_test.cpp files, CUDA in *_cuda_test.cu files).
//
//   rwd::fixed_reduction::expect_reductions_match_the_host_fold<rwd::ThrustBackend>(exact);
//
// The reference below is written from the documented decomposition (P = clamp(ceil(n/32), 1,
// 65536) strided partials, a second strided pass to 256 when P > 256, a host fold), with plain
// loops and no code shared with the backend, so a backend that folds in any other order — a
// sequential fold, another P, another second pass, a tree — fails. Reductions whose terms are
// computed without a multiply-add (sums of values, max |x|, all_finite) must match bit for bit on
// every device system; those with products (dot, wrms_norm, error_norm) only where the compiler
// does not contract them into fused multiply-adds (`products_exact`: false under nvcc's default
// --fmad=true), and within a rounding bound otherwise.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "rewind/host_device.hpp"
#include "rewind/types.hpp"
#include "support/host_vectors.hpp"
#include "support/random_data.hpp"

namespace rwd::fixed_reduction {

using Host = std::vector<double>;

// The documented decomposition, folded on the host.
template <class Fold>
double reference_fold(const Host& terms, Fold fold) {
  const long long n = static_cast<long long>(terms.size());
  if (n == 0) return 0.0;
  const long long p = std::min<long long>(std::max<long long>((n + 31) / 32, 1), 65536);
  Host partials(static_cast<std::size_t>(p), 0.0);
  for (long long k = 0; k < p; ++k)
    for (long long i = k; i < n; i += p) partials[k] = fold(partials[k], terms[i]);
  if (p > 256) {
    Host second(256, 0.0);
    for (long long q = 0; q < 256; ++q)
      for (long long k = q; k < p; k += 256) second[q] = fold(second[q], partials[k]);
    partials = second;
  }
  double acc = 0.0;
  for (const double v : partials) acc = fold(acc, v);
  return acc;
}

inline double plus(double a, double b) {
  return a + b;
}
inline double nan_max(double a, double b) {
  return (b > a || b != b) ? b : a;
}

inline bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Σ_i x_i through sum_index: no product, so exact on every device system.
struct Value {
  const double* x;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    Sums<1> s;
    s.v[0] = x[i];
    return s;
  }
};

// Sizes on both sides of every boundary of the decomposition: one partial, P <= 256 (no second
// pass), P > 256, and P at its cap of 65536 with several elements per partial.
inline const std::vector<Index>& sizes() {
  static const std::vector<Index> s = {1, 31, 32, 33, 1000, 8192, 8193, 100003, 2097152 + 4099};
  return s;
}

template <class B>
void expect_reductions_match_the_host_fold(bool products_exact) {
  for (const Index n : sizes()) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    // Values of widely different magnitudes, so that the order of the sum shows in its bits.
    Host x = rwd::testing::random_values(n, /*seed=*/static_cast<std::uint64_t>(n));
    for (Index i = 0; i < n; i += 7) x[i] *= 1e8;
    const Host y = rwd::testing::random_values(n, /*seed=*/static_cast<std::uint64_t>(n) + 1);
    const Host w = rwd::testing::random_values(n, static_cast<std::uint64_t>(n) + 2, 0.5, 2.0);
    const typename B::Vector bx = rwd::testing::to_backend<B>(x);
    const typename B::Vector by = rwd::testing::to_backend<B>(y);
    const typename B::Vector bw = rwd::testing::to_backend<B>(w);

    const double sum = B::template sum_index<1>(n, Value{B::data(bx)})[0];
    EXPECT_TRUE(same_bits(sum, reference_fold(x, plus))) << sum;

    Host abs_x(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) abs_x[i] = std::fabs(x[i]);
    EXPECT_TRUE(same_bits(B::max_norm(bx), reference_fold(abs_x, nan_max)));

    Host products(x.size()), weighted(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      products[i] = x[i] * y[i];
      const double p = y[i] * w[i];
      weighted[i] = p * p;
    }
    const double dot = reference_fold(products, plus);
    const double wrms = std::sqrt(reference_fold(weighted, plus) / static_cast<double>(n));
    if (products_exact) {
      EXPECT_TRUE(same_bits(B::dot(bx, by), dot)) << B::dot(bx, by) << " vs " << dot;
      EXPECT_TRUE(same_bits(B::wrms_norm(by, bw), wrms));
    } else {
      // Each fused term differs by at most one rounding of the product.
      double bound = 0.0;
      for (const double p : products) bound += std::fabs(p);
      EXPECT_NEAR(B::dot(bx, by), dot, 4.0 * std::numeric_limits<double>::epsilon() * bound);
      EXPECT_NEAR(B::wrms_norm(by, bw), wrms, 1e-14 * wrms);
    }

    // Order-sensitivity: the same data summed sequentially gives other bits (for the sizes with
    // more than one partial), so the bitwise checks above can tell the decompositions apart.
    if (n >= 100003) {
      double sequential = 0.0;
      for (const double v : x) sequential += v;
      EXPECT_FALSE(same_bits(sequential, sum));
    }
  }
}

// max_norm and all_finite see a NaN or an infinity at any position, in either pass.
template <class B>
void expect_non_finite_values_found_everywhere() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const Index n : {Index{5}, Index{9000}, Index{2097152 + 4099}}) {
    for (const Index at : {Index{0}, n / 2, n - 1}) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", at " << at);
      Host x(static_cast<std::size_t>(n), -0.0);
      x[static_cast<std::size_t>(at)] = nan;
      typename B::Vector bx = rwd::testing::to_backend<B>(x);
      EXPECT_TRUE(std::isnan(B::max_norm(bx)));
      EXPECT_FALSE(B::all_finite(bx));
      x[static_cast<std::size_t>(at)] = -inf;
      bx = rwd::testing::to_backend<B>(x);
      EXPECT_EQ(B::max_norm(bx), inf);
      EXPECT_FALSE(B::all_finite(bx));
      x[static_cast<std::size_t>(at)] = -0.0;
      bx = rwd::testing::to_backend<B>(x);
      EXPECT_TRUE(B::all_finite(bx));
      EXPECT_TRUE(same_bits(B::max_norm(bx), 0.0));  // |-0| = +0
    }
  }
}

}  // namespace rwd::fixed_reduction
