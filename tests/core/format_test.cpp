// The shared text and timing helpers (rewind/format.hpp): byte counts with three significant
// digits in powers of 1024, paths in single quotes, seconds on the steady clock.
#include "rewind/format.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace rwd {
namespace {

TEST(FormatBytes, ThreeSignificantDigitsInPowersOf1024) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(4096), "4.00 KiB");
  EXPECT_EQ(format_bytes(78.2 * 1048576), "78.2 MiB");
  EXPECT_EQ(format_bytes(256.0 * 1048576), "256 MiB");
  EXPECT_EQ(format_bytes(1.5 * 1073741824.0), "1.50 GiB");
  EXPECT_EQ(format_bytes(2048.0 * 1152921504606846976.0), "2048 EiB");  // no unit above EiB
}

TEST(Quoted, PutsThePathInSingleQuotes) {
  EXPECT_EQ(quoted("/tmp/run.h5"), "'/tmp/run.h5'");
  EXPECT_EQ(quoted(std::filesystem::path("dir") / "file"), "'dir/file'");
  EXPECT_EQ(quoted(""), "''");
}

TEST(SecondsSince, CountsSteadyClockSeconds) {
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const double s = seconds_since(start);
  EXPECT_GE(s, 0.002);
  EXPECT_LT(s, 60.0);
}

}  // namespace
}  // namespace rwd
