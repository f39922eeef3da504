// src/cli/byte_size.hpp — reading sizes on the command line: byte counts with unit
// suffixes (--memory 256MiB) and step or snapshot counts (--steps 1e6).
//
//   std::int64_t b = rwd::cli::parse_byte_size("--memory", "1.5GiB");   // 1610612736
//   rwd::Index l = rwd::cli::parse_count("--steps", "1e6");              // 1000000
//
// Byte counts: a number (digits, an optional fraction and exponent: 4096, 1e6, 1.5) followed by
// an optional unit, case-insensitive, with or without a space: B; K, KiB, M, MiB, G, GiB, T, TiB
// (powers of 1024); KB, MB, GB, TB (powers of 1000). Fractions of a byte are rounded down.
// Anything else, zero, a negative or a value of 2^62 bytes or more is refused with an
// InvalidArgument naming the flag, what was typed and the range. A count is read by
// parse_integer (integer_text.hpp): a whole number in [1, 2^62] (1e6 is, 1.5 and 1e20 are not).
//
// Sizes are written back for a person by rwd::format_bytes (rewind/format.hpp), which this header
// includes: "256 MiB".
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "integer_text.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

// Sizes and counts above this are refused: products with state sizes must stay in 64 bits.
inline constexpr double kMaxCount = 4611686018427387904.0;  // 2^62

namespace detail {

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "1.5 GiB" into the number 1.5 and the rest "gib" (lower case, spaces trimmed). False
// when the text does not start with a finite number.
inline bool split_number(std::string_view text, double& number, std::string& rest) {
  std::string s(text);
  const std::size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return false;
  s.erase(0, first);
  // strtod also reads "inf", "nan" and hexadecimal: accept only a plain decimal start.
  const unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (!std::isdigit(c0) && s[0] != '.' && s[0] != '+' && s[0] != '-') return false;
  errno = 0;
  char* end = nullptr;
  number = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno == ERANGE || !std::isfinite(number)) return false;
  if (s.find_first_of("xX") < static_cast<std::size_t>(end - s.c_str())) return false;
  rest = lower(std::string_view(end));
  const std::size_t a = rest.find_first_not_of(" \t");
  rest = a == std::string::npos ? "" : rest.substr(a);
  const std::size_t b = rest.find_last_not_of(" \t");
  if (b != std::string::npos) rest.erase(b + 1);
  return true;
}

// The multiplier of a unit suffix (lower case); 0 when it is not one.
inline double unit_multiplier(const std::string& unit) {
  struct Unit {
    const char* name;
    double factor;
  };
  static const Unit units[] = {
      {"", 1.0},
      {"b", 1.0},
      {"k", 1024.0},
      {"kib", 1024.0},
      {"m", 1048576.0},
      {"mib", 1048576.0},
      {"g", 1073741824.0},
      {"gib", 1073741824.0},
      {"t", 1099511627776.0},
      {"tib", 1099511627776.0},
      {"kb", 1e3},
      {"mb", 1e6},
      {"gb", 1e9},
      {"tb", 1e12},
  };
  for (const Unit& u : units)
    if (unit == u.name) return u.factor;
  return 0.0;
}

}  // namespace detail

// A byte count > 0 (see the top of this file).
inline std::int64_t parse_byte_size(const char* flag, std::string_view text) {
  double number = 0.0;
  std::string unit;
  const auto refuse = [&](const char* why) -> std::int64_t {
    rwd::detail::fail<InvalidArgument>(flag, " = '", text, "' ", why, " (", flag,
                                       " takes a byte count in [1, 2^62 - 1])");
  };
  if (!detail::split_number(text, number, unit))
    return refuse("is not a byte count; write e.g. 4096, 1e6, 64KiB, 256MiB or 1GiB");
  const double factor = detail::unit_multiplier(unit);
  if (factor == 0.0)
    return refuse(
        "has an unknown unit; use B, KiB, MiB, GiB, TiB (powers of 1024; also K, M, G, T) or "
        "KB, MB, GB, TB (powers of 1000)");
  const double bytes = std::floor(number * factor);
  if (!(bytes >= 1.0)) return refuse("must be at least 1 byte");
  if (bytes >= kMaxCount) return refuse("is too large");
  return static_cast<std::int64_t>(bytes);
}

// A whole number in [1, 2^62] written as digits or in scientific notation (1e6), read exactly
// (integer_text.hpp).
inline Index parse_count(const char* flag, std::string_view text) {
  return parse_integer<Index>(flag, text, IntegerRange::count());
}

}  // namespace rwd::cli
