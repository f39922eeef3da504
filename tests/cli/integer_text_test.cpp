// Every integer of the command line is read by rwd::cli::parse_integer (src/cli/integer_text.hpp):
// exactly, within the option's range, and refused with the option and the range named. (The
// executable's refusals — exit status 2, nothing written — are the ctests cli_integer_*.)
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "../../src/cli/byte_size.hpp"
#include "../../src/cli/integer_text.hpp"

namespace rwd::cli {
namespace {

// The message of the refusal ("" when the text is accepted).
template <class T = Index>
std::string refusal(const char* text, IntegerRange range = IntegerRange::count()) {
  try {
    parse_integer<T>("--steps", text, range);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(IntegerText, ReadsWholeNumbersExactly) {
  const auto count = IntegerRange::count();
  EXPECT_EQ(parse_integer<Index>("--steps", "1000", count), 1000);
  EXPECT_EQ(parse_integer<Index>("--steps", " +7 ", count), 7);
  EXPECT_EQ(parse_integer<Index>("--steps", "1e6", count), 1000000);
  EXPECT_EQ(parse_integer<Index>("--steps", "1E6", count), 1000000);
  EXPECT_EQ(parse_integer<Index>("--steps", "2.5e3", count), 2500);
  EXPECT_EQ(parse_integer<Index>("--steps", "1.0", count), 1);
  EXPECT_EQ(parse_integer<Index>("--steps", "12.", count), 12);
  EXPECT_EQ(parse_integer<Index>("--steps", "0001", count), 1);
  EXPECT_EQ(parse_integer<Index>("--steps", "1000e-3", count), 1);
  // Beyond double precision, the value typed (not its nearest double).
  EXPECT_EQ(parse_integer<Index>("--steps", "123456789012345678", count), 123456789012345678);
  EXPECT_EQ(parse_integer<Index>("--steps", "9007199254740993e0", count), 9007199254740993);
  EXPECT_EQ(parse_integer<Index>("--steps", "4611686018427387904", count), Index{1} << 62);
  EXPECT_EQ(parse_integer<Index>("--steps", "0", IntegerRange::count_or_zero()), 0);
  EXPECT_EQ(parse_integer<Index>("--steps", "-0", IntegerRange::count_or_zero()), 0);
  EXPECT_EQ(
      parse_integer<std::uint64_t>("--seed", "18446744073709551615", IntegerRange::unsigned_seed()),
      std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_integer<std::int64_t>("--seed", "9223372036854775807", IntegerRange::seed()),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_integer<int>("--x", "-5", IntegerRange::between(-10, 10)), -5);
  EXPECT_EQ(parse_integer<std::int64_t>(
                "--x", "-9223372036854775808",
                IntegerRange::between(std::numeric_limits<std::int64_t>::min(), 0)),
            std::numeric_limits<std::int64_t>::min());
}

TEST(IntegerText, RefusesWithTheOptionAndTheRangeNamed) {
  const std::string range = "--steps takes a whole number in [1, 2^62]";
  EXPECT_EQ(refusal("1e20"), "--steps = '1e20' is too large: " + range);
  EXPECT_EQ(refusal("-1"), "--steps = '-1' must be >= 1: " + range);
  EXPECT_EQ(refusal("0"), "--steps = '0' must be >= 1: " + range);
  EXPECT_EQ(refusal("1.5"), "--steps = '1.5' is not a whole number (it has a fraction): " + range);
  EXPECT_EQ(refusal("18446744073709551616"),
            "--steps = '18446744073709551616' is too large: " + range);  // 2^64
  EXPECT_EQ(refusal(""), "--steps = '' is empty: " + range);
  EXPECT_EQ(refusal("   "), "--steps = '   ' is empty: " + range);
  EXPECT_EQ(refusal("ten"), "--steps = 'ten' is not a whole number: " + range);
  EXPECT_EQ(refusal("4611686018427387905"),
            "--steps = '4611686018427387905' is too large: " + range);
  EXPECT_EQ(refusal("-1e400"), "--steps = '-1e400' is too small: " + range);
  for (const char* bad : {"0x10", "inf", "nan", "1e", "e5", ".", "+", "-", "1 2", "5MiB", "1,000",
                          "1e-400", "1e99999999999999999999", "1.5e0", "--1", "1e+-3"}) {
    const std::string message = refusal(bad);
    EXPECT_NE(message.find(std::string("--steps = '") + bad + "'"), std::string::npos) << bad;
    EXPECT_NE(message.find(range), std::string::npos) << bad << ": " << message;
  }
  EXPECT_EQ(refusal<std::uint64_t>("-1", IntegerRange::unsigned_seed()),
            "--steps = '-1' must be >= 0: --steps takes a whole number in [0, 2^64 - 1]");
  EXPECT_EQ(refusal<std::int64_t>("9223372036854775808", IntegerRange::seed()),
            "--steps = '9223372036854775808' is too large: --steps takes a whole number in [0, "
            "2^63 - 1]");
  EXPECT_EQ(refusal<int>("10", IntegerRange::between(0, 9)),
            "--steps = '10' is too large: --steps takes a whole number in [0, 9]");
}

TEST(IntegerText, ARangeWiderThanTheTypeIsAnInternalError) {
  EXPECT_THROW(parse_integer<int>("--x", "1", IntegerRange::count()), InvalidArgument);
  EXPECT_THROW(parse_integer<std::uint64_t>("--x", "1", IntegerRange::between(-1, 5)),
               InvalidArgument);
}

TEST(IntegerText, CountsOfTheCheckpointFlagsAreReadTheSameWay) {
  EXPECT_EQ(parse_count("--snapshots", "20"), 20);
  try {
    parse_count("--snapshots", "1e20");
    ADD_FAILURE() << "accepted 1e20";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(
        e.what(),
        "--snapshots = '1e20' is too large: --snapshots takes a whole number in [1, 2^62]");
  }
}

}  // namespace
}  // namespace rwd::cli
