// tests/core/backend_conformance_suite.hpp — the one conformance suite every backend passes.
//
// A GoogleTest type-parameterised suite over a backend B (rwd::VectorBackend): every operation
// of rewind/backend/backend.hpp against a plain host-side reference on random data of sizes 0, 1,
// 7, 513 and 10000 (not multiples of EigenBackend's 512-element block). Instantiate it once per
// translation unit and backend list:
//
//   #include "backend_conformance_suite.hpp"
//   namespace rwd::conformance {
//   using Backends = ::testing::Types<rwd::EigenBackend, rwd::ThrustBackend>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, BackendConformance, Backends, BackendName);
//   }
//
// Element-wise results (and linear_combination's fixed order: a·x first, then the terms in the
// order given) must equal the sequential reference bit for bit where
// ElementwiseMatchesHost<B> (B::deterministic, unless specialised: CUDA with nvcc's default
// --fmad=true contracts a·x + c·v into FMAs) and within a rounding-error bound otherwise.
// Reductions are always compared within a rigorous bound (Eigen vectorises its sums), and must
// repeat bit for bit where B::deterministic. A backend whose device may be missing at run time
// specialises DeviceCheck<B> to skip the whole suite.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"
#include "support/host_vectors.hpp"
#include "support/random_data.hpp"
#include "support/typed_test_names.hpp"

namespace rwd::conformance {

// Specialise for a backend that may lack its device at run time; a non-empty reason skips every
// test of the suite for that backend (e.g. no CUDA device on a CI machine).
template <class B>
struct DeviceCheck {
  static std::string missing() { return {}; }
};

// Test names from B::name, made identifier-like ("thrust-cpp" -> "thrust_cpp").
using BackendName = rwd::testing::NameMember;

inline constexpr Index kSizes[] = {0, 1, 7, 513, 10000};
inline constexpr double kEps = std::numeric_limits<double>::epsilon();

using Host = std::vector<double>;
using rwd::testing::random_values;
using rwd::testing::to_backend;
using rwd::testing::to_host;

inline bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

inline ::testing::AssertionResult bitwise_equal(const Host& got, const Host& ref) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << ref.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same_bits(got[i], ref[i]))
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got "
                                           << got[i] << ", expected " << ref[i] << " bit for bit";
  return ::testing::AssertionSuccess();
}

// |got_i - ref_i| <= tol_i for element-wise results with a per-element error bound.
inline ::testing::AssertionResult within(const Host& got, const Host& ref, const Host& tol) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << "sizes " << got.size() << " and " << ref.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - ref[i]) <= tol[i]))
      return ::testing::AssertionFailure()
             << "element " << i << " of " << got.size() << ": got " << got[i] << ", expected "
             << ref[i] << " within " << tol[i];
  return ::testing::AssertionSuccess();
}

// Whether B's element-wise results equal the sequential host reference bit for bit: true on a
// deterministic backend unless its compiler fuses multiply-adds (CUDA built with nvcc's default
// --fmad=true specialises this to false; its results still repeat bit for bit).
template <class B>
struct ElementwiseMatchesHost {
  static constexpr bool value = B::deterministic;
};

// Bit for bit where ElementwiseMatchesHost, within `tol` elsewhere.
template <class B>
::testing::AssertionResult matches_reference(const Host& got, const Host& ref, const Host& tol) {
  if constexpr (ElementwiseMatchesHost<B>::value)
    return bitwise_equal(got, ref);
  else
    return within(got, ref, tol);
}

// A rigorous bound for the difference of two sums of the same n terms in any order:
// 2 γ_n Σ|t_i| with γ_n ≈ n·ε, plus the smallest normal for underflow.
inline double sum_tolerance(std::size_t n, double sum_abs) {
  return 2.0 * static_cast<double>(n + 1) * kEps * sum_abs + std::numeric_limits<double>::min();
}

// Relative bound for a norm sqrt(Σ t_i / n) of n non-negative terms, against the reference.
inline double norm_tolerance(std::size_t n, double ref) {
  return (static_cast<double>(n) + 8.0) * kEps * ref + std::numeric_limits<double>::min();
}

inline ::testing::AssertionResult close(double got, double ref, double tol) {
  if (std::abs(got - ref) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "got " << got << ", expected " << ref << " within " << tol;
}

// y_i = x_i + i: written once per index (no multiply, so no FMA contraction anywhere).
struct AddIndex {
  const double* x;
  double* y;
  REWIND_HOST_DEVICE void operator()(Index i) const { y[i] = x[i] + static_cast<double>(i); }
};

// (x_i, x_i·y_i, i) in one pass.
struct ThreeSums {
  const double* x;
  const double* y;
  REWIND_HOST_DEVICE Sums<3> operator()(Index i) const {
    Sums<3> s{};
    s.v[0] = x[i];
    s.v[1] = x[i] * y[i];
    s.v[2] = static_cast<double>(i);
    return s;
  }
};

// Random inputs of one linear combination: x, v_1..v_k, a, c_1..c_k.
template <class B>
struct CombinationCase {
  Host x;
  std::vector<Host> v;
  double a = 0.0;
  Host c;
  std::vector<typename B::Vector> dv;
  std::vector<const typename B::Vector*> pointers;

  CombinationCase(Index n, int terms, std::uint64_t seed) {
    x = random_values(n, seed);
    const Host coeff = random_values(terms + 1, seed + 1, -2.0, 2.0);
    a = coeff[0];
    c.assign(coeff.begin() + 1, coeff.end());
    for (int j = 0; j < terms; ++j)
      v.push_back(random_values(n, seed + 2 + static_cast<std::uint64_t>(j)));
    dv.reserve(v.size());
    for (const Host& h : v) dv.push_back(to_backend<B>(h));
    for (const auto& d : dv) pointers.push_back(&d);
  }

  // The sequential reference: o = a·x_i (or 0), then o += c_j·v_j,i for j in order; and the
  // rounding-error bound of a backend that evaluates it in another (or fused) way.
  void reference(bool with_x, Host& ref, Host& tol) const {
    const std::size_t n = x.size();
    ref.assign(n, 0.0);
    tol.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      double o = 0.0;
      double abs_sum = 0.0;
      if (with_x) {
        o = a * x[i];
        abs_sum = std::abs(o);
      }
      for (std::size_t j = 0; j < c.size(); ++j) {
        o += c[j] * v[j][i];
        abs_sum += std::abs(c[j] * v[j][i]);
      }
      ref[i] = o;
      tol[i] = sum_tolerance(c.size() + 1, abs_sum);
    }
  }
};

template <class B>
class BackendConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = DeviceCheck<B>::missing();
    if (!why.empty()) GTEST_SKIP() << B::name << ": " << why;
  }
};

TYPED_TEST_SUITE_P(BackendConformance);

TYPED_TEST_P(BackendConformance, SatisfiesTheTraitAndMakesZeros) {
  using B = TypeParam;
  static_assert(VectorBackend<B>);
  EXPECT_GT(std::string(B::name).size(), 0u);
  for (Index n : kSizes) {
    typename B::Vector z = B::zeros(n);
    ASSERT_EQ(B::size(z), n);
    EXPECT_TRUE(bitwise_equal(to_host<B>(z), Host(static_cast<std::size_t>(n), 0.0)));
    if (n > 0) {
      EXPECT_NE(B::data(z), nullptr);
      const typename B::Vector& cz = z;
      EXPECT_EQ(B::data(cz), B::data(z));
    }
  }
}

TYPED_TEST_P(BackendConformance, CopiesToAndFromHostBitForBit) {
  using B = TypeParam;
  for (Index n : kSizes) {
    Host h = random_values(n, 10 + static_cast<std::uint64_t>(n), -1e300, 1e300);
    if (n > 2) {
      h[0] = -0.0;
      h[1] = std::numeric_limits<double>::denorm_min();
      h[2] = std::numeric_limits<double>::quiet_NaN();
    }
    typename B::Vector v = B::zeros(n);
    B::copy_from_host(std::span<const double>(h), v);
    Host back(static_cast<std::size_t>(n), 1.0);
    B::copy_to_host(v, std::span<double>(back));
    EXPECT_TRUE(bitwise_equal(back, h)) << "n = " << n;
  }
}

TYPED_TEST_P(BackendConformance, RefusesHostBuffersOfAnotherSize) {
  using B = TypeParam;
  for (Index n : kSizes) {
    const Host original = random_values(n, 20 + static_cast<std::uint64_t>(n));
    typename B::Vector v = to_backend<B>(original);
    std::vector<Index> wrong = {n + 1};
    if (n > 0) wrong.push_back(n - 1);
    for (Index m : wrong) {
      Host host(static_cast<std::size_t>(m), 7.0);
      const std::string sizes[] = {std::to_string(n), std::to_string(m)};
      try {
        B::copy_to_host(v, std::span<double>(host));
        ADD_FAILURE() << "copy_to_host accepted " << m << " elements for a vector of " << n;
      } catch (const InvalidArgument& e) {
        for (const std::string& s : sizes)
          EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
      }
      EXPECT_TRUE(bitwise_equal(host, Host(static_cast<std::size_t>(m), 7.0)));
      try {
        B::copy_from_host(std::span<const double>(host), v);
        ADD_FAILURE() << "copy_from_host accepted " << m << " elements for a vector of " << n;
      } catch (const InvalidArgument& e) {
        for (const std::string& s : sizes)
          EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
      }
      EXPECT_TRUE(bitwise_equal(to_host<B>(v), original)) << "a refused copy changed the vector";
    }
  }
}

TYPED_TEST_P(BackendConformance, FillsCopiesScalesAndAxpys) {
  using B = TypeParam;
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    const Host hx = random_values(n, 30 + static_cast<std::uint64_t>(n));
    const Host hy = random_values(n, 40 + static_cast<std::uint64_t>(n));
    const double a = -1.2345678901234567;

    typename B::Vector x = B::zeros(n);
    B::fill(x, a);
    EXPECT_TRUE(bitwise_equal(to_host<B>(x), Host(un, a))) << "fill, n = " << n;

    x = to_backend<B>(hx);
    typename B::Vector y = B::zeros(n);
    B::copy(x, y);
    EXPECT_TRUE(bitwise_equal(to_host<B>(y), hx)) << "copy, n = " << n;

    B::scale(a, y);
    Host ref(un);
    for (std::size_t i = 0; i < un; ++i) ref[i] = a * hx[i];
    EXPECT_TRUE(bitwise_equal(to_host<B>(y), ref)) << "scale, n = " << n;  // one rounding

    y = to_backend<B>(hy);
    B::axpy(a, x, y);
    Host tol(un);
    for (std::size_t i = 0; i < un; ++i) {
      ref[i] = hy[i] + a * hx[i];
      tol[i] = sum_tolerance(2, std::abs(hy[i]) + std::abs(a * hx[i]));
    }
    EXPECT_TRUE(matches_reference<B>(to_host<B>(y), ref, tol)) << "axpy, n = " << n;
    EXPECT_TRUE(bitwise_equal(to_host<B>(x), hx)) << "axpy changed x, n = " << n;
  }
}

// copy_streaming<B> (the Eigen backend's non-temporal stores from 4096 values on, copy()
// elsewhere): the same bits as copy(), NaN, −0, subnormals and infinities included, on both sides
// of the streaming threshold and with odd lengths (a scalar tail).
TYPED_TEST_P(BackendConformance, StreamingCopyIsACopyBitForBit) {
  using B = TypeParam;
  for (Index n :
       {Index{0}, Index{1}, Index{7}, Index{4095}, Index{4096}, Index{4097}, Index{10001}}) {
    Host h = random_values(n, 90 + static_cast<std::uint64_t>(n));
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -0.0,
                               std::numeric_limits<double>::denorm_min(),
                               -std::numeric_limits<double>::infinity()};
    for (std::size_t k = 0; k < h.size() && k < 4; ++k) h[h.size() - 1 - k] = specials[k];
    const typename B::Vector x = to_backend<B>(h);
    typename B::Vector y = B::zeros(n);
    copy_streaming<B>(x, y);
    EXPECT_TRUE(bitwise_equal(to_host<B>(y), h)) << "n = " << n;
    EXPECT_TRUE(bitwise_equal(to_host<B>(x), h)) << "the source changed, n = " << n;
  }
}

TYPED_TEST_P(BackendConformance, LinearCombinationWithXMatchesTheSequentialOrder) {
  using B = TypeParam;
  for (Index n : kSizes) {
    for (int terms = 0; terms <= kMaxCombinationTerms; ++terms) {
      const CombinationCase<B> k(n, terms, 1000 * static_cast<std::uint64_t>(n) + terms);
      Host ref, tol;
      k.reference(true, ref, tol);
      const typename B::Vector x = to_backend<B>(k.x);

      typename B::Vector out = B::zeros(n);
      B::fill(out, std::numeric_limits<double>::quiet_NaN());
      B::linear_combination(out, k.a, x, k.c, k.pointers);
      EXPECT_TRUE(matches_reference<B>(to_host<B>(out), ref, tol))
          << "n = " << n << ", terms = " << terms;

      // out aliasing x.
      typename B::Vector inplace = to_backend<B>(k.x);
      B::linear_combination(inplace, k.a, inplace, k.c, k.pointers);
      EXPECT_TRUE(matches_reference<B>(to_host<B>(inplace), ref, tol))
          << "out = x, n = " << n << ", terms = " << terms;

      // Inputs untouched.
      EXPECT_TRUE(bitwise_equal(to_host<B>(x), k.x));
      for (std::size_t j = 0; j < k.v.size(); ++j)
        EXPECT_TRUE(bitwise_equal(to_host<B>(k.dv[j]), k.v[j]));
    }
  }
}

TYPED_TEST_P(BackendConformance, LinearCombinationWithoutXMatchesTheSequentialOrder) {
  using B = TypeParam;
  for (Index n : kSizes) {
    for (int terms = 0; terms <= kMaxCombinationTerms; ++terms) {
      const CombinationCase<B> k(n, terms, 2000 * static_cast<std::uint64_t>(n) + terms);
      Host ref, tol;
      k.reference(false, ref, tol);
      typename B::Vector out = B::zeros(n);
      B::fill(out, std::numeric_limits<double>::quiet_NaN());
      B::linear_combination(out, k.c, k.pointers);
      EXPECT_TRUE(matches_reference<B>(to_host<B>(out), ref, tol))
          << "n = " << n << ", terms = " << terms;
    }
  }
}

TYPED_TEST_P(BackendConformance, LinearCombinationKeepsSignedZerosLikeTheReference) {
  using B = TypeParam;
  // 0 + (-1)(+0) = +0 and (-1)(+0) alone = -0: the reference starts from a·x or from +0.
  const Host zero(5, 0.0);
  const typename B::Vector x = to_backend<B>(zero);
  const typename B::Vector v = to_backend<B>(zero);
  const double c[] = {-1.0};
  const typename B::Vector* vs[] = {&v};
  typename B::Vector out = B::zeros(5);
  B::linear_combination(out, -1.0, x, c, vs);
  EXPECT_TRUE(bitwise_equal(to_host<B>(out), Host(5, -0.0 + -0.0)));
  B::linear_combination(out, c, vs);
  EXPECT_TRUE(bitwise_equal(to_host<B>(out), Host(5, 0.0 + -0.0)));
  B::linear_combination(out, -1.0, x, {}, {});
  EXPECT_TRUE(bitwise_equal(to_host<B>(out), Host(5, -0.0)));
}

TYPED_TEST_P(BackendConformance, DotMaxNormAndWrmsNormMatchTheirFormulas) {
  using B = TypeParam;
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    const Host hx = random_values(n, 50 + static_cast<std::uint64_t>(n), -3.0, 3.0);
    const Host hw = random_values(n, 60 + static_cast<std::uint64_t>(n), 0.0, 2.0);
    const typename B::Vector x = to_backend<B>(hx);
    const typename B::Vector w = to_backend<B>(hw);

    double dot = 0.0, dot_abs = 0.0, max_abs = 0.0, squares = 0.0;
    for (std::size_t i = 0; i < un; ++i) {
      dot += hx[i] * hw[i];
      dot_abs += std::abs(hx[i] * hw[i]);
      max_abs = std::max(max_abs, std::abs(hx[i]));
      squares += (hx[i] * hw[i]) * (hx[i] * hw[i]);
    }
    const double wrms = un == 0 ? 0.0 : std::sqrt(squares / static_cast<double>(un));

    EXPECT_TRUE(close(B::dot(x, w), dot, sum_tolerance(un, dot_abs))) << "dot, n = " << n;
    EXPECT_TRUE(same_bits(B::max_norm(x), max_abs)) << "max_norm, n = " << n;  // exact
    EXPECT_TRUE(close(B::wrms_norm(x, w), wrms, norm_tolerance(un, wrms)))
        << "wrms_norm, n = " << n;
    if (n == 0) {
      EXPECT_TRUE(same_bits(B::dot(x, w), 0.0));
      EXPECT_TRUE(same_bits(B::wrms_norm(x, w), 0.0));
    }
  }
  // Hand-checked: x = (3, -4), w = (1, 1): x·x = 25, x·w = -1, |x|_max = 4, wrms = sqrt(25/2).
  const typename B::Vector x = to_backend<B>(Host{3.0, -4.0});
  const typename B::Vector w = to_backend<B>(Host{1.0, 1.0});
  EXPECT_EQ(B::dot(x, x), 25.0);
  EXPECT_EQ(B::dot(x, w), -1.0);
  EXPECT_EQ(B::max_norm(x), 4.0);
  EXPECT_TRUE(same_bits(B::max_norm(to_backend<B>(Host(9, -0.0))), 0.0));  // |-0| = +0
  EXPECT_EQ(B::wrms_norm(x, w), std::sqrt(12.5));
}

TYPED_TEST_P(BackendConformance, ErrorNormMatchesItsFormula) {
  using B = TypeParam;
  const double rtol = 1e-4, atol = 1e-7;
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    const Host he = random_values(n, 70 + static_cast<std::uint64_t>(n), -1e-5, 1e-5);
    Host hy0 = random_values(n, 80 + static_cast<std::uint64_t>(n), -10.0, 10.0);
    const Host hy1 = random_values(n, 90 + static_cast<std::uint64_t>(n), -10.0, 10.0);
    for (std::size_t i = 0; i < un; i += 3) hy0[i] *= 1e-9;  // let atol matter somewhere
    double sum = 0.0;
    for (std::size_t i = 0; i < un; ++i) {
      const double scale = atol + rtol * std::max(std::abs(hy0[i]), std::abs(hy1[i]));
      const double r = he[i] / scale;
      sum += r * r;
    }
    const double ref = un == 0 ? 0.0 : std::sqrt(sum / static_cast<double>(un));
    const double got =
        B::error_norm(to_backend<B>(he), to_backend<B>(hy0), to_backend<B>(hy1), rtol, atol);
    EXPECT_TRUE(close(got, ref, norm_tolerance(un, ref))) << "n = " << n;
    if (n == 0) {
      EXPECT_TRUE(same_bits(got, 0.0));
    }
  }
  // Hand-checked: scale = 0.5 + 0.5·max(3, 1) = 2, r = 2/2 = 1 -> 1; the max is taken per element.
  EXPECT_EQ(B::error_norm(to_backend<B>(Host{2.0}), to_backend<B>(Host{-3.0}),
                          to_backend<B>(Host{1.0}), 0.5, 0.5),
            1.0);
  EXPECT_EQ(B::error_norm(to_backend<B>(Host{2.0, 4.0}), to_backend<B>(Host{-3.0, 0.0}),
                          to_backend<B>(Host{1.0, -7.0}), 0.5, 0.5),
            1.0);
}

TYPED_TEST_P(BackendConformance, AllFiniteFindsNanAndInfinityAnywhere) {
  using B = TypeParam;
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    Host h = random_values(n, 100 + static_cast<std::uint64_t>(n));
    EXPECT_TRUE(B::all_finite(to_backend<B>(h))) << "n = " << n;
    if (n == 0) continue;
    // The largest finite magnitudes and subnormals are finite too.
    Host extreme = h;
    extreme[0] = std::numeric_limits<double>::max();
    extreme[un - 1] = -std::numeric_limits<double>::max();
    extreme[un / 2] = std::numeric_limits<double>::denorm_min();
    EXPECT_TRUE(B::all_finite(to_backend<B>(extreme))) << "n = " << n;
    for (double s : specials) {
      for (std::size_t at : {std::size_t{0}, un / 2, un - 1}) {
        Host bad = h;
        bad[at] = s;
        EXPECT_FALSE(B::all_finite(to_backend<B>(bad))) << s << " at " << at << " of " << n;
      }
    }
  }
}

TYPED_TEST_P(BackendConformance, ForEachIndexVisitsEveryIndexOnce) {
  using B = TypeParam;
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    const Host hx = random_values(n, 110 + static_cast<std::uint64_t>(n));
    const typename B::Vector x = to_backend<B>(hx);
    typename B::Vector y = B::zeros(n);
    B::fill(y, std::numeric_limits<double>::quiet_NaN());
    B::for_each_index(n, AddIndex{B::data(x), B::data(y)});
    Host ref(un);
    for (std::size_t i = 0; i < un; ++i) ref[i] = hx[i] + static_cast<double>(i);
    EXPECT_TRUE(bitwise_equal(to_host<B>(y), ref)) << "n = " << n;
  }
}

TYPED_TEST_P(BackendConformance, SumIndexCarriesThreeSumsInOnePass) {
  using B = TypeParam;
  for (Index n : kSizes) {
    const std::size_t un = static_cast<std::size_t>(n);
    const Host hx = random_values(n, 120 + static_cast<std::uint64_t>(n));
    const Host hy = random_values(n, 130 + static_cast<std::uint64_t>(n));
    const typename B::Vector x = to_backend<B>(hx);
    const typename B::Vector y = to_backend<B>(hy);
    const Sums<3> s = B::template sum_index<3>(n, ThreeSums{B::data(x), B::data(y)});
    double s0 = 0.0, s1 = 0.0, a0 = 0.0, a1 = 0.0;
    for (std::size_t i = 0; i < un; ++i) {
      s0 += hx[i];
      s1 += hx[i] * hy[i];
      a0 += std::abs(hx[i]);
      a1 += std::abs(hx[i] * hy[i]);
    }
    EXPECT_TRUE(close(s[0], s0, sum_tolerance(un, a0))) << "n = " << n;
    EXPECT_TRUE(close(s[1], s1, sum_tolerance(un, a1))) << "n = " << n;
    // Σ i is an integer below 2^53: exact in any order.
    EXPECT_EQ(s[2], static_cast<double>(n) * static_cast<double>(n - 1) / 2.0) << "n = " << n;
    if (n == 0) {
      for (int k = 0; k < 3; ++k) EXPECT_TRUE(same_bits(s[k], 0.0));
    }
  }
}

TYPED_TEST_P(BackendConformance, RepeatsItselfBitForBit) {
  using B = TypeParam;
  const Index n = 10000;
  const CombinationCase<B> k(n, kMaxCombinationTerms, 4242);
  const Host hw = random_values(n, 4343, 0.5, 1.5);
  const typename B::Vector x = to_backend<B>(k.x);
  const typename B::Vector x_again = to_backend<B>(k.x);  // same values, other memory
  const typename B::Vector w = to_backend<B>(hw);
  const typename B::Vector& v0 = k.dv[0];
  const typename B::Vector& v1 = k.dv[1];

  // Element-wise operations repeat exactly on every backend.
  typename B::Vector out1 = B::zeros(n), out2 = B::zeros(n);
  B::linear_combination(out1, k.a, x, k.c, k.pointers);
  B::linear_combination(out2, k.a, x_again, k.c, k.pointers);
  EXPECT_TRUE(bitwise_equal(to_host<B>(out1), to_host<B>(out2)));
  B::linear_combination(out1, k.c, k.pointers);
  B::linear_combination(out2, k.c, k.pointers);
  EXPECT_TRUE(bitwise_equal(to_host<B>(out1), to_host<B>(out2)));
  B::copy(v0, out1);
  B::copy(v0, out2);
  B::axpy(k.a, x, out1);
  B::axpy(k.a, x_again, out2);
  EXPECT_TRUE(bitwise_equal(to_host<B>(out1), to_host<B>(out2)));

  // Reductions: same bits where the backend promises it, else the same value within rounding.
  auto reductions = [&](const typename B::Vector& xs) {
    const Sums<3> s = B::template sum_index<3>(n, ThreeSums{B::data(xs), B::data(v1)});
    return std::vector<double>{B::dot(xs, v0),
                               B::max_norm(xs),
                               B::wrms_norm(xs, w),
                               B::error_norm(v0, xs, v1, 1e-3, 1e-6),
                               s[0],
                               s[1],
                               s[2]};
  };
  const std::vector<double> first = reductions(x);
  const std::vector<double> second = reductions(x);
  const std::vector<double> other_memory = reductions(x_again);
  for (std::size_t r = 0; r < first.size(); ++r) {
    if constexpr (B::deterministic) {
      EXPECT_TRUE(same_bits(first[r], second[r])) << "reduction " << r;
      EXPECT_TRUE(same_bits(first[r], other_memory[r])) << "reduction " << r;
    } else {
      const double tol = 1e-10 * std::max(1.0, std::abs(first[r]));
      EXPECT_TRUE(close(second[r], first[r], tol)) << "reduction " << r;
      EXPECT_TRUE(close(other_memory[r], first[r], tol)) << "reduction " << r;
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(BackendConformance, SatisfiesTheTraitAndMakesZeros,
                            CopiesToAndFromHostBitForBit, RefusesHostBuffersOfAnotherSize,
                            FillsCopiesScalesAndAxpys, StreamingCopyIsACopyBitForBit,
                            LinearCombinationWithXMatchesTheSequentialOrder,
                            LinearCombinationWithoutXMatchesTheSequentialOrder,
                            LinearCombinationKeepsSignedZerosLikeTheReference,
                            DotMaxNormAndWrmsNormMatchTheirFormulas, ErrorNormMatchesItsFormula,
                            AllFiniteFindsNanAndInfinityAnywhere, ForEachIndexVisitsEveryIndexOnce,
                            SumIndexCarriesThreeSumsInOnePass, RepeatsItselfBitForBit);

// The limits of ThrustBackend's fused combination (a functor holding kMaxCombinationTerms
// pointers): more terms, or coefficient and vector counts that differ, are refused.
template <class B>
void expect_refuses_bad_combinations() {
  const Index n = 7;
  const CombinationCase<B> k(n, kMaxCombinationTerms, 77);
  std::vector<const typename B::Vector*> too_many = k.pointers;
  too_many.push_back(k.pointers[0]);
  Host c = k.c;
  c.push_back(1.0);
  const typename B::Vector x = to_backend<B>(k.x);
  typename B::Vector out = B::zeros(n);
  EXPECT_THROW(B::linear_combination(out, k.a, x, c, too_many), InvalidArgument);
  EXPECT_THROW(B::linear_combination(out, c, too_many), InvalidArgument);
  try {
    B::linear_combination(out, c, too_many);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxCombinationTerms + 1)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(B::linear_combination(out, k.a, x, k.c, std::span(k.pointers).first(3)),
               InvalidArgument);
}

}  // namespace rwd::conformance
