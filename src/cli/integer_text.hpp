// src/cli/integer_text.hpp — every integer typed on the command line, read one way: exactly,
// within a range the option names, or refused before any work.
//
//   using rwd::cli::IntegerRange;
//   rwd::Index l = rwd::cli::parse_integer<rwd::Index>("--steps", "1e6", IntegerRange::count());
//   // 1000000; "1e20", "-1", "1.5", "18446744073709551616", "" and "ten" are refused:
//   //   --steps = '1e20' is too large: --steps takes a whole number in [1, 2^62]
//
// Accepted: optional spaces, an optional sign, digits with an optional fraction and exponent
// (1000, +7, 1e6, 2.5e3, 1.0), read exactly in decimal (no rounding through a double: the value
// of 123456789012345678 or 9007199254740993e0 is the value typed), whole, and within the range.
// Refused, each with an InvalidArgument that names the option, what was typed and the range: an
// empty value, anything else (hexadecimal, inf, nan, units, a second number), a fraction, a value
// below the range (negative counts) and a value above it — also one beyond 64 bits, which is
// never wrapped or saturated.
//
// CLI11 registration is in integer_option.hpp; this header is free of CLI11 so that
// tests/cli/cli_test.cpp and the fuzzing harnesses can use it with rewind alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "rewind/error.hpp"

namespace rwd::cli {

// The values an integer option accepts, [min, max]; max may exceed INT64_MAX (unsigned seeds).
struct IntegerRange {
  std::int64_t min = 0;
  std::uint64_t max = 0;

  // Step, snapshot, iteration counts: [1, 2^62] (products with state sizes stay in 64 bits).
  static constexpr IntegerRange count() { return {1, std::uint64_t{1} << 62}; }
  // Counts that may be 0 (--disk-snapshots 0, --augment 0): [0, 2^62].
  static constexpr IntegerRange count_or_zero() { return {0, std::uint64_t{1} << 62}; }
  // Seeds kept in a signed 64-bit integer: [0, 2^63 - 1].
  static constexpr IntegerRange seed() {
    return {0, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())};
  }
  // Seeds kept in an unsigned 64-bit integer: [0, 2^64 - 1].
  static constexpr IntegerRange unsigned_seed() {
    return {0, std::numeric_limits<std::uint64_t>::max()};
  }
  static constexpr IntegerRange between(std::int64_t low, std::uint64_t high) {
    return {low, high};
  }
};

namespace detail {

// 2^62, 2^63 - 1 and the other limits a person would rather read as powers of two.
inline std::string integer_bound_text(std::uint64_t magnitude, bool negative) {
  struct Named {
    std::uint64_t value;
    const char* text;
  };
  static constexpr Named named[] = {
      {std::uint64_t{1} << 62, "2^62"},
      {(std::uint64_t{1} << 63) - 1, "2^63 - 1"},
      {std::uint64_t{1} << 63, "2^63"},
      {std::numeric_limits<std::uint64_t>::max(), "2^64 - 1"},
      {(std::uint64_t{1} << 31) - 1, "2^31 - 1"},
  };
  // Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) about "-" + std::string.
  std::string out = negative ? "-" : "";
  for (const Named& n : named)
    if (n.value == magnitude) return out.append(n.text);
  return out.append(std::to_string(magnitude));
}

inline std::string integer_min_text(const IntegerRange& range) {
  const bool negative = range.min < 0;
  const std::uint64_t low = negative ? std::uint64_t{0} - static_cast<std::uint64_t>(range.min)
                                     : static_cast<std::uint64_t>(range.min);
  return integer_bound_text(low, negative);
}

inline std::string integer_range_text(const IntegerRange& range) {
  std::string out = "[";
  out.append(integer_min_text(range)).append(", ");
  return out.append(integer_bound_text(range.max, false)).append("]");
}

// What the text says, read exactly: a sign and a magnitude, or why it is no whole number.
struct ExactInteger {
  enum class Kind { value, empty, malformed, fraction, too_large } kind = Kind::malformed;
  bool negative = false;
  std::uint64_t magnitude = 0;  // for Kind::value
};

inline ExactInteger read_exact_integer(std::string_view text) {
  using Kind = ExactInteger::Kind;
  ExactInteger out;
  const auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.empty()) {
    out.kind = Kind::empty;
    return out;
  }
  std::size_t at = 0;
  if (text[at] == '+' || text[at] == '-') out.negative = text[at++] == '-';
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  // The significant digits (integer and fraction parts together) and the power of ten that
  // scales them: "2.50e3" is 250 x 10^1.
  std::string digits;
  std::int64_t power = 0;
  std::size_t integer_digits = 0, fraction_digits = 0;
  for (; at < text.size() && is_digit(text[at]); ++at, ++integer_digits) digits += text[at];
  if (at < text.size() && text[at] == '.') {
    for (++at; at < text.size() && is_digit(text[at]); ++at, ++fraction_digits) {
      digits += text[at];
      --power;
    }
  }
  if (integer_digits + fraction_digits == 0) return out;  // malformed: no digit
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    bool exponent_negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-'))
      exponent_negative = text[at++] == '-';
    std::int64_t exponent = 0;
    std::size_t exponent_digits = 0;
    for (; at < text.size() && is_digit(text[at]); ++at, ++exponent_digits)
      exponent = std::min<std::int64_t>(exponent * 10 + (text[at] - '0'), 1000000);
    if (exponent_digits == 0) return out;  // malformed: "1e"
    power += exponent_negative ? -exponent : exponent;
  }
  if (at != text.size()) return out;  // malformed: anything after the number

  // Leading zeros say nothing; trailing zeros move into the power.
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {  // zero, however written ("-0.000e99")
    out.kind = Kind::value;
    out.negative = false;
    return out;
  }
  digits.erase(0, first);
  while (digits.back() == '0') {
    digits.pop_back();
    ++power;
  }
  if (power < 0) {
    out.kind = Kind::fraction;
    return out;
  }
  // 2^64 has 20 digits: anything longer is beyond every range.
  if (static_cast<std::int64_t>(digits.size()) + power > 20) {
    out.kind = Kind::too_large;
    return out;
  }
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  for (char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (value > (kMax - d) / 10) {
      out.kind = Kind::too_large;
      return out;
    }
    value = value * 10 + d;
  }
  for (std::int64_t p = 0; p < power; ++p) {
    if (value > kMax / 10) {
      out.kind = Kind::too_large;
      return out;
    }
    value *= 10;
  }
  out.kind = Kind::value;
  out.magnitude = value;
  return out;
}

}  // namespace detail

// The integer typed for `flag`, in `range` and as a T (see the top of this file); InvalidArgument
// "FLAG = 'TEXT' <why>: FLAG takes a whole number in [MIN, MAX]" otherwise.
template <class T>
T parse_integer(std::string_view flag, std::string_view text, const IntegerRange& range) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using Kind = detail::ExactInteger::Kind;
  const auto refuse = [&](const std::string& why) -> T {
    rwd::detail::fail<InvalidArgument>(flag, " = '", text, "' ", why, ": ", flag,
                                       " takes a whole number in ",
                                       detail::integer_range_text(range));
  };
  // The range must fit T: an error in the option's declaration, whatever was typed.
  using Limits = std::numeric_limits<T>;
  if (range.max > static_cast<std::uint64_t>(Limits::max()) ||
      (std::is_unsigned_v<T> && range.min < 0) ||
      (std::is_signed_v<T> && range.min < static_cast<std::int64_t>(Limits::min())))
    rwd::detail::fail<InvalidArgument>("internal error: the range of ", flag,
                                       " does not fit its type");
  const detail::ExactInteger read = detail::read_exact_integer(text);
  switch (read.kind) {
    case Kind::empty:
      return refuse("is empty");
    case Kind::malformed:
      return refuse("is not a whole number");
    case Kind::fraction:
      return refuse("is not a whole number (it has a fraction)");
    case Kind::too_large:
      return refuse(read.negative ? "is too small" : "is too large");
    case Kind::value:
      break;
  }
  const std::string at_least = std::string("must be >= ").append(detail::integer_min_text(range));
  if (read.negative && read.magnitude > 0) {
    // Below every range that starts at 0 or above; otherwise compare magnitudes.
    const std::uint64_t lowest =
        range.min < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(range.min) : 0;
    if (range.min >= 0 || read.magnitude > lowest) return refuse(at_least);
  } else {
    if (range.min > 0 && read.magnitude < static_cast<std::uint64_t>(range.min))
      return refuse(at_least);
    if (read.magnitude > range.max) return refuse("is too large");
  }
  if (read.negative && read.magnitude > 0)
    return static_cast<T>(-static_cast<std::int64_t>(read.magnitude - 1) - 1);
  return static_cast<T>(read.magnitude);
}

}  // namespace rwd::cli
