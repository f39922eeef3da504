// rewind/schedule/checked_arithmetic.hpp — 64-bit integer arithmetic that refuses to wrap.
//
// Schedule arithmetic multiplies step counts by binomials; near l = 2^31 such products overflow
// 32 bits, and near 2^62 some overflow 64. These helpers throw rwd::InvalidArgument naming the
// quantity instead of wrapping.
//
//   using namespace rwd::detail;
//   Index total = checked_add(advances, k, "advances");          // throws on overflow
//   Index next = mul_div_exact(beta, r, c + r, "beta");           // a·b/d without a wide product
//
// Internal (namespace rwd::detail): not part of the public API.
#pragma once

#include <limits>
#include <numeric>

#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

inline constexpr Index kIndexMax = std::numeric_limits<Index>::max();

// a + b, or false when it does not fit in Index.
inline bool try_add(Index a, Index b, Index& out) {
  if ((b > 0 && a > kIndexMax - b) || (b < 0 && a < std::numeric_limits<Index>::min() - b))
    return false;
  out = a + b;
  return true;
}

// a · b for a, b ≥ 0, or false when it does not fit in Index.
inline bool try_mul(Index a, Index b, Index& out) {
  if (a != 0 && b > kIndexMax / a) return false;
  out = a * b;
  return true;
}

inline Index checked_add(Index a, Index b, const char* what) {
  Index out = 0;
  if (!try_add(a, b, out))
    fail<InvalidArgument>(what, ": ", a, " + ", b, " overflows 64-bit integers");
  return out;
}

// For a, b ≥ 0.
inline Index checked_mul(Index a, Index b, const char* what) {
  Index out = 0;
  if (!try_mul(a, b, out))
    fail<InvalidArgument>(what, ": ", a, " * ", b, " overflows 64-bit integers");
  return out;
}

// a · b / d for a, b ≥ 0 and d > 0 when d divides a · b exactly (as in binomial recurrences).
// Cancels gcd(a, d) first, so no intermediate exceeds the result: it throws only when the
// result itself does not fit.
inline Index mul_div_exact(Index a, Index b, Index d, const char* what) {
  const Index g = std::gcd(a, d);
  if (g > 1) {
    a /= g;
    d /= g;
  }
  return checked_mul(a, b / d, what);
}

}  // namespace rwd::detail
