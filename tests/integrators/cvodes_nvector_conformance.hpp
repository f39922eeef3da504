// tests/integrators/cvodes_nvector_conformance.hpp — one op-by-op conformance suite for rewind's
// SUNDIALS N_Vectors (rwd::sundials::BackendNVector over the Eigen, Thrust and distributed
// backends), as SUNDIALS' own test_nvector checks its vectors: every operation CVODES calls, the
// fused ones, and the vector-array ones SUNDIALS builds from them, against a plain reference
// written here from the SUNDIALS definitions, on sizes that include 0, 1 and odd ones.
//
//   struct MyHarness : rwd::nvector_conformance::Harness { … };   // how to reach the vectors
//   rwd::nvector_conformance::expect_conformance(harness, {0, 1, 7, 1000});
//   std::vector<double> bits = rwd::nvector_conformance::reductions(harness, 1000);
//
// What is exact and what is not: element-wise results (and the fused linear combinations, whose
// order of terms the contract fixes) must equal the reference bit for bit — except where the
// harness allows a relative tolerance (nvcc's fused multiply-adds); maxima, minima, min
// quotients, counts and booleans must be exact; sums (dot, the norms) are folded in each
// backend's own fixed order, so they must lie within the worst-case rounding bound of any
// summation order, (n + 2)·u·Σ|term|, of the reference — far below what a wrong, missing or
// doubled term moves. `reductions` returns every reduction's value, so that a test can compare
// their bits across thread counts or numbers of ranks.
//
// The harness hands out N_Vectors holding given global values and reads back this process's
// part, so the same suite runs on vectors split across MPI ranks (each rank checks its part of
// every element-wise result; every reduction is global).
#pragma once

#include <gtest/gtest.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>
#include <sundials/sundials_types.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/types.hpp"

namespace rwd::nvector_conformance {

using Values = std::vector<double>;

// How the suite reaches one backend's N_Vectors.
class Harness {
 public:
  virtual ~Harness() = default;
  virtual const char* name() const = 0;
  // A new N_Vector of the global values `global` (this process keeps its part); the suite
  // destroys it with N_VDestroy. The global length is one the harness supports (`supports`).
  virtual N_Vector make(const Values& global) = 0;
  // This process's values of v, in its order.
  virtual Values read(N_Vector v) = 0;
  // This process's part of a global vector, in the same order as `read`.
  virtual Values mine(const Values& global) = 0;
  // Whether vectors of n values can be made (a split layout needs a row per rank).
  virtual bool supports(Index) const { return true; }
  // The ID N_VGetVectorID reports, and whether the values are one process's host memory (then
  // N_VCloneEmpty gives a vector without values and N_VSetArrayPointer may re-point it).
  virtual N_Vector_ID id() const = 0;
  virtual bool host_arrays() const = 0;
  // Relative tolerance of element-wise results against the reference (0: the same bits).
  virtual double elementwise_tolerance() const { return 0.0; }
  SUNContext context() const { return context_; }

 protected:
  SUNContext context_ = nullptr;
};

// N_Vectors destroyed when the scope ends, however it ends.
class Owned {
 public:
  explicit Owned(Harness& h) : h_(h) {}
  ~Owned() {
    for (N_Vector v : all_) N_VDestroy(v);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  N_Vector operator()(const Values& global) { return keep(h_.make(global)); }
  N_Vector keep(N_Vector v) {
    all_.push_back(v);
    return v;
  }

 private:
  Harness& h_;
  std::vector<N_Vector> all_;
};

inline constexpr double kUnit = std::numeric_limits<double>::epsilon() / 2;  // u, unit round-off

// n values uniform in [lo, hi), seeded (the same on every rank).
inline Values uniform(Index n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Values x(static_cast<std::size_t>(n));
  for (double& v : x) v = dist(rng);
  return x;
}

// The same bits (NaN payloads and the sign of zero included).
inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// --- the reference: SUNDIALS' definitions, one plain loop each ----------------------------------
template <class F>
Values elementwise(std::size_t n, F f) {
  Values z(n);
  for (std::size_t i = 0; i < n; ++i) z[i] = f(i);
  return z;
}
struct Sum {
  double value = 0.0;      // in long double, then rounded: the reference
  double magnitude = 0.0;  // Σ|term|, for the rounding bound
};
template <class F>
Sum reference_sum(std::size_t n, F term) {
  long double s = 0.0L, m = 0.0L;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = term(i);
    s += t;
    m += std::abs(t);
  }
  return {static_cast<double>(s), static_cast<double>(m)};
}

// got must lie within the rounding bound of any order of summing n terms (plus the terms' own
// rounding, one u each).
inline void expect_sum(double got, const Sum& reference, std::size_t n, const std::string& what) {
  const double bound = (static_cast<double>(n) + 2.0) * kUnit * reference.magnitude;
  EXPECT_LE(std::abs(got - reference.value), bound)
      << what << ": " << got << " against the reference " << reference.value << " (n = " << n
      << ")";
}
// sqrt(S) within the bound of S (the square root halves a relative error, and adds one u).
inline void expect_root_of_sum(double got, const Sum& reference, double divisor, std::size_t n,
                               const std::string& what) {
  if (divisor == 0.0) {
    EXPECT_EQ(got, 0.0) << what << ": an empty vector's norm";
    return;
  }
  const double want = std::sqrt(reference.value / divisor);
  const double relative = (static_cast<double>(n) + 4.0) * kUnit;
  EXPECT_LE(std::abs(got - want), relative * want + std::numeric_limits<double>::min())
      << what << ": " << got << " against the reference " << want << " (n = " << n << ")";
}

inline void expect_values(Harness& h, N_Vector v, const Values& global, const std::string& what) {
  const Values got = h.read(v), want = h.mine(global);
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tolerance = h.elementwise_tolerance();
  double scale = 0.0;  // the tolerance is relative to the largest reference value
  for (const double v : want)
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  // The first value that differs, if any (EXPECT, not ASSERT: every rank of a split vector must
  // go on to the same collectives).
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool ok = (tolerance == 0.0 || !std::isfinite(want[i]))
                        ? same_bits(got[i], want[i])
                        : std::abs(got[i] - want[i]) <= tolerance * scale;
    if (!ok) {
      ADD_FAILURE() << h.name() << " " << what << ": value " << i << " of this process is "
                    << got[i] << ", the reference " << want[i];
      return;
    }
  }
}

// The data every check works on, of global length n.
struct Data {
  std::size_t n;
  Values x, y, w, id, codes, with_zero;
  explicit Data(Index length) : n(static_cast<std::size_t>(length)) {
    x = uniform(length, 1, -2.0, 2.0);
    if (n > 1) x[n - 1] = -1.0;  // a tie for N_VCompare(1.0, x): |x_i| = 1 counts
    y = uniform(length, 2, -1.0, 3.0);
    w = uniform(length, 3, 0.1, 1.0);
    id = uniform(length, 4, -1.0, 1.0);
    codes = elementwise(n, [](std::size_t i) {
      constexpr double kCodes[] = {2.0, 0.0, 1.0, -1.0, 0.0, -2.0, 2.0};
      return kCodes[i % 7];
    });
    with_zero = w;
    if (n > 0) with_zero[n / 2] = 0.0;
  }
};

// --- element-wise operations ---------------------------------------------------------------------
inline void expect_elementwise(Harness& h, const Data& d) {
  Owned own(h);
  N_Vector x = own(d.x), y = own(d.y), w = own(d.w), z = own(Values(d.n, 0.0));
  const std::size_t n = d.n;
  N_VLinearSum(0.7, x, -1.3, y, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return 0.7 * d.x[i] + -1.3 * d.y[i]; }),
                "N_VLinearSum");
  N_VConst(2.5, z);
  expect_values(h, z, Values(n, 2.5), "N_VConst");
  N_VProd(x, y, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return d.x[i] * d.y[i]; }), "N_VProd");
  N_VDiv(x, w, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return d.x[i] / d.w[i]; }), "N_VDiv");
  N_VScale(-0.25, x, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return -0.25 * d.x[i]; }), "N_VScale");
  N_VAbs(x, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return std::abs(d.x[i]); }), "N_VAbs");
  N_VInv(w, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return 1.0 / d.w[i]; }), "N_VInv");
  N_VAddConst(x, 0.5, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return d.x[i] + 0.5; }), "N_VAddConst");
  N_VCompare(1.0, x, z);
  expect_values(h, z,
                elementwise(n, [&](std::size_t i) { return std::abs(d.x[i]) >= 1.0 ? 1.0 : 0.0; }),
                "N_VCompare");
  // In place: z may be an input.
  N_VScale(1.0, x, z);
  N_VLinearSum(2.0, z, 1.0, y, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return 2.0 * d.x[i] + 1.0 * d.y[i]; }),
                "N_VLinearSum in place");
  N_VProd(z, z, z);
  expect_values(h, z,
                elementwise(n,
                            [&](std::size_t i) {
                              const double v = 2.0 * d.x[i] + 1.0 * d.y[i];
                              return v * v;
                            }),
                "N_VProd in place");
}

// --- reductions: every value, for bit comparisons across thread and rank counts -----------------
inline Values reductions(Harness& h, Index length) {
  const Data d(length);
  Owned own(h);
  N_Vector x = own(d.x), y = own(d.y), w = own(d.w), id = own(d.id), c = own(d.codes),
           zero = own(d.with_zero), z = own(Values(d.n, 0.0));
  Values r = {N_VDotProd(x, y),
              N_VWrmsNorm(x, w),
              N_VWrmsNormMask(x, w, id),
              N_VWL2Norm(x, w),
              N_VL1Norm(x),
              N_VMaxNorm(x),
              N_VMin(y),
              N_VMinQuotient(x, y),
              N_VMinQuotient(x, zero),
              N_VInvTest(w, z) == SUNTRUE ? 1.0 : 0.0,
              N_VInvTest(zero, z) == SUNTRUE ? 1.0 : 0.0,
              N_VConstrMask(c, y, z) == SUNTRUE ? 1.0 : 0.0,
              static_cast<double>(N_VGetLength(x))};
  N_Vector ys[3] = {y, w, id};
  double dots[3];
  N_VDotProdMulti(3, x, ys, dots);
  r.insert(r.end(), dots, dots + 3);
  return r;
}

inline void expect_reductions(Harness& h, const Data& d) {
  const std::size_t n = d.n;
  const Index length = static_cast<Index>(n);
  const Values r = reductions(h, length);
  expect_sum(r[0], reference_sum(n, [&](std::size_t i) { return d.x[i] * d.y[i]; }), n,
             "N_VDotProd");
  const Sum squares = reference_sum(n, [&](std::size_t i) {
    const double p = d.x[i] * d.w[i];
    return p * p;
  });
  const Sum masked = reference_sum(n, [&](std::size_t i) {
    const double p = d.id[i] > 0.0 ? d.x[i] * d.w[i] : 0.0;
    return p * p;
  });
  expect_root_of_sum(r[1], squares, static_cast<double>(n), n, "N_VWrmsNorm");
  expect_root_of_sum(r[2], masked, static_cast<double>(n), n, "N_VWrmsNormMask");
  if (n > 0) expect_root_of_sum(r[3], squares, 1.0, n, "N_VWL2Norm");
  EXPECT_EQ(n == 0, r[3] == 0.0) << "N_VWL2Norm";
  expect_sum(r[4], reference_sum(n, [&](std::size_t i) { return std::abs(d.x[i]); }), n,
             "N_VL1Norm");
  double max_abs = 0.0, min_y = std::numeric_limits<double>::infinity(), q = BIG_REAL,
         q_zero = BIG_REAL;
  for (std::size_t i = 0; i < n; ++i) {
    max_abs = std::max(max_abs, std::abs(d.x[i]));
    min_y = std::min(min_y, d.y[i]);
    if (d.y[i] != 0.0) q = std::min(q, d.x[i] / d.y[i]);
    if (d.with_zero[i] != 0.0) q_zero = std::min(q_zero, d.x[i] / d.with_zero[i]);
  }
  EXPECT_TRUE(same_bits(r[5], max_abs)) << "N_VMaxNorm: " << r[5] << " vs " << max_abs;
  EXPECT_TRUE(same_bits(r[6], min_y)) << "N_VMin: " << r[6] << " vs " << min_y;
  EXPECT_TRUE(same_bits(r[7], q)) << "N_VMinQuotient: " << r[7] << " vs " << q;
  EXPECT_TRUE(same_bits(r[8], q_zero)) << "N_VMinQuotient over a zero: " << r[8];
  EXPECT_EQ(r[9], 1.0) << "N_VInvTest without a zero";
  EXPECT_EQ(r[10], n == 0 ? 1.0 : 0.0) << "N_VInvTest with a zero";
  bool constraints_hold = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double ci = d.codes[i], yi = d.y[i];
    if ((ci == 2.0 && !(yi > 0.0)) || (ci == 1.0 && !(yi >= 0.0)) || (ci == -1.0 && !(yi <= 0.0)) ||
        (ci == -2.0 && !(yi < 0.0)))
      constraints_hold = false;
  }
  EXPECT_EQ(r[11], constraints_hold ? 1.0 : 0.0) << "N_VConstrMask";
  EXPECT_EQ(r[12], static_cast<double>(n)) << "N_VGetLength is the global length";
  EXPECT_TRUE(same_bits(r[13], r[0])) << "N_VDotProdMulti's first product is N_VDotProd's";
  expect_sum(r[14], reference_sum(n, [&](std::size_t i) { return d.x[i] * d.w[i]; }), n,
             "N_VDotProdMulti, second");
  expect_sum(r[15], reference_sum(n, [&](std::size_t i) { return d.x[i] * d.id[i]; }), n,
             "N_VDotProdMulti, third");
  // The same inputs, the same bits: every reduction again.
  const Values again = reductions(h, length);
  for (std::size_t j = 0; j < r.size(); ++j)
    EXPECT_TRUE(same_bits(again[j], r[j])) << "reduction " << j << " repeated";

  // Outputs of the tests: 1/x where x ≠ 0, and the violation mask.
  Owned own(h);
  N_Vector w = own(d.w), zero = own(d.with_zero), c = own(d.codes), y = own(d.y);
  N_Vector z = own(Values(n, -7.0));
  N_VInvTest(w, z);
  expect_values(h, z, elementwise(n, [&](std::size_t i) { return 1.0 / d.w[i]; }), "N_VInvTest");
  N_VConst(-7.0, z);
  N_VInvTest(zero, z);
  expect_values(
      h, z,
      elementwise(
          n, [&](std::size_t i) { return d.with_zero[i] != 0.0 ? 1.0 / d.with_zero[i] : -7.0; }),
      "N_VInvTest with a zero (left alone where x = 0)");
  N_VConstrMask(c, y, z);
  expect_values(h, z,
                elementwise(n,
                            [&](std::size_t i) {
                              const double ci = d.codes[i], yi = d.y[i];
                              const bool bad =
                                  (ci == 2.0 && !(yi > 0.0)) || (ci == 1.0 && !(yi >= 0.0)) ||
                                  (ci == -1.0 && !(yi <= 0.0)) || (ci == -2.0 && !(yi < 0.0));
                              return bad ? 1.0 : 0.0;
                            }),
                "N_VConstrMask's mask");
}

// A NaN anywhere is the maximum norm and the minimum, on every process.
inline void expect_nan_wins(Harness& h, const Data& d) {
  if (d.n == 0) return;
  for (const std::size_t at : {std::size_t{0}, d.n / 2, d.n - 1}) {
    Values v = d.x;
    v[at] = std::numeric_limits<double>::quiet_NaN();
    Owned own(h);
    N_Vector x = own(v);
    EXPECT_TRUE(std::isnan(N_VMaxNorm(x))) << "N_VMaxNorm with a NaN at " << at;
    EXPECT_TRUE(std::isnan(N_VMin(x))) << "N_VMin with a NaN at " << at;
  }
}

// --- fused and vector-array operations ----------------------------------------------------------
inline void expect_fused(Harness& h, const Data& d) {
  const std::size_t n = d.n;
  Owned own(h);
  const int most = kMaxCombinationTerms + 5;  // more than one combination kernel takes
  std::vector<Values> terms;
  std::vector<N_Vector> xs;
  Values c;
  for (int j = 0; j < most; ++j) {
    terms.push_back(uniform(static_cast<Index>(n), 10 + static_cast<std::uint64_t>(j), -1.0, 1.0));
    xs.push_back(own(terms.back()));
    c.push_back(0.1 * (j + 1) * (j % 2 ? -1.0 : 1.0));
  }
  const auto combination = [&](int count, const Values* first) {
    return elementwise(n, [&](std::size_t i) {
      double s = c[0] * (first ? (*first)[i] : terms[0][i]);
      for (int j = 1; j < count; ++j)
        s += c[static_cast<std::size_t>(j)] * terms[static_cast<std::size_t>(j)][i];
      return s;
    });
  };
  N_Vector z = own(Values(n, 0.0));
  for (const int count : {1, 2, 3, 7, kMaxCombinationTerms, kMaxCombinationTerms + 1, most}) {
    ASSERT_EQ(N_VLinearCombination(count, c.data(), xs.data(), z), 0);
    expect_values(h, z, combination(count, nullptr),
                  "N_VLinearCombination of " + std::to_string(count));
  }
  // z may be the first term.
  {
    N_Vector first = own(d.x);
    std::vector<N_Vector> with_z = xs;
    with_z[0] = first;
    ASSERT_EQ(N_VLinearCombination(most, c.data(), with_z.data(), first), 0);
    expect_values(h, first, combination(most, &d.x), "N_VLinearCombination into its first term");
  }
  // z_j = a_j x + y_j.
  N_Vector outs[3] = {own(Values(n, 0.0)), own(Values(n, 0.0)), own(Values(n, 0.0))};
  double a[3] = {0.5, -2.0, 3.25};
  ASSERT_EQ(N_VScaleAddMulti(3, a, xs[0], xs.data() + 1, outs), 0);
  for (std::size_t j = 0; j < 3; ++j)
    expect_values(
        h, outs[j],
        elementwise(n, [&](std::size_t i) { return a[j] * terms[0][i] + terms[j + 1][i]; }),
        "N_VScaleAddMulti " + std::to_string(j));
  // SUNDIALS' vector-array operations, built from the ones above: the same values.
  ASSERT_EQ(N_VLinearSumVectorArray(3, 0.5, xs.data(), -1.5, xs.data() + 3, outs), 0);
  for (std::size_t j = 0; j < 3; ++j)
    expect_values(
        h, outs[j],
        elementwise(n, [&](std::size_t i) { return 0.5 * terms[j][i] + -1.5 * terms[j + 3][i]; }),
        "N_VLinearSumVectorArray " + std::to_string(j));
  ASSERT_EQ(N_VScaleVectorArray(3, a, xs.data(), outs), 0);
  for (std::size_t j = 0; j < 3; ++j)
    expect_values(h, outs[j], elementwise(n, [&](std::size_t i) { return a[j] * terms[j][i]; }),
                  "N_VScaleVectorArray " + std::to_string(j));
  ASSERT_EQ(N_VConstVectorArray(3, 4.5, outs), 0);
  for (std::size_t j = 0; j < 3; ++j)
    expect_values(h, outs[j], Values(n, 4.5), "N_VConstVectorArray " + std::to_string(j));
  N_Vector weights[3] = {own(d.w), own(d.w), own(d.w)};
  double norms[3];
  ASSERT_EQ(N_VWrmsNormVectorArray(3, xs.data(), weights, norms), 0);
  for (std::size_t j = 0; j < 3; ++j)
    EXPECT_TRUE(same_bits(norms[j], N_VWrmsNorm(xs[j], weights[j]))) << "N_VWrmsNormVectorArray";
  N_Vector mask = own(d.id);
  ASSERT_EQ(N_VWrmsNormMaskVectorArray(3, xs.data(), weights, mask, norms), 0);
  for (std::size_t j = 0; j < 3; ++j)
    EXPECT_TRUE(same_bits(norms[j], N_VWrmsNormMask(xs[j], weights[j], mask)))
        << "N_VWrmsNormMaskVectorArray";
}

// --- clones, identity, array pointers -----------------------------------------------------------
inline void expect_clones(Harness& h, const Data& d) {
  const std::size_t n = d.n;
  Owned own(h);
  N_Vector x = own(d.x);
  EXPECT_EQ(N_VGetVectorID(x), h.id());
  EXPECT_EQ(N_VGetLength(x), static_cast<sunindextype>(n));
  sunindextype real_words = -1, integer_words = -1;
  N_VSpace(x, &real_words, &integer_words);
  EXPECT_EQ(real_words, static_cast<sunindextype>(h.mine(d.x).size())) << "N_VSpace";
  N_Vector clone = own.keep(N_VClone(x));
  ASSERT_NE(clone, nullptr);
  EXPECT_EQ(N_VGetLength(clone), static_cast<sunindextype>(n));
  EXPECT_EQ(N_VGetVectorID(clone), h.id());
  EXPECT_EQ(N_VGetCommunicator(clone) == nullptr, N_VGetCommunicator(x) == nullptr);
  N_VConst(1.0, clone);
  expect_values(h, clone, Values(n, 1.0), "a clone's own values");
  expect_values(h, x, d.x, "the original, after its clone was written");
  N_Vector clone_of_clone = own.keep(N_VClone(clone));
  ASSERT_NE(clone_of_clone, nullptr);
  N_VScale(3.0, clone, clone_of_clone);
  expect_values(h, clone_of_clone, Values(n, 3.0), "a clone of a clone");

  N_Vector empty = own.keep(N_VCloneEmpty(x));
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(N_VGetLength(empty), static_cast<sunindextype>(n));
  if (h.host_arrays()) {
    // Pointed at a foreign array (as SUNDIALS' difference-quotient Jacobians do with a matrix
    // column), it computes there; pointed back, it is the original again.
    Values column(n, 0.0);
    N_VSetArrayPointer(column.data(), empty);
    EXPECT_EQ(N_VGetArrayPointer(empty), column.data());
    N_VLinearSum(1.0, x, 2.0, x, empty);
    EXPECT_TRUE(column ==
                elementwise(n, [&](std::size_t i) { return 1.0 * d.x[i] + 2.0 * d.x[i]; }))
        << "an operation on a vector pointed at a foreign array";
    double* original = N_VGetArrayPointer(clone);
    Values elsewhere(d.w);
    N_VSetArrayPointer(elsewhere.data(), clone);
    EXPECT_TRUE(
        same_bits(N_VMaxNorm(clone), n == 0 ? 0.0 : *std::max_element(d.w.begin(), d.w.end())))
        << "a clone pointed at a foreign array reads it";
    N_VSetArrayPointer(original, clone);
    expect_values(h, clone, Values(n, 1.0), "a clone pointed back at its own values");
  } else {
    N_VConst(2.0, empty);  // it has values of its own
    expect_values(h, empty, Values(n, 2.0), "N_VCloneEmpty on a backend without host arrays");
    N_VSetArrayPointer(N_VGetArrayPointer(empty), empty);  // its own array: nothing changes
    expect_values(h, empty, Values(n, 2.0), "N_VSetArrayPointer to its own array");
  }
}

// Every check on every size the harness supports.
inline void expect_conformance(Harness& h, const std::vector<Index>& sizes) {
  for (const Index n : sizes) {
    if (!h.supports(n)) continue;
    SCOPED_TRACE(::testing::Message() << h.name() << ", n = " << n);
    const Data d(n);
    expect_elementwise(h, d);
    expect_reductions(h, d);
    expect_nan_wins(h, d);
    expect_fused(h, d);
    expect_clones(h, d);
  }
}

}  // namespace rwd::nvector_conformance
