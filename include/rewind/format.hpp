// rewind/format.hpp — small text and timing helpers that every part shares: a byte count for a
// person to read, a path quoted for an error message, and the seconds a run has taken so far.
//
//   rwd::format_bytes(512);                     // "512 B"
//   rwd::format_bytes(4096);                    // "4.00 KiB"
//   rwd::format_bytes(82001920);                // "78.2 MiB"
//   rwd::format_bytes(268435456);               // "256 MiB"
//   rwd::quoted("/tmp/run.h5");                 // "'/tmp/run.h5'"
//
//   const auto start = std::chrono::steady_clock::now();
//   step();
//   summary.forward_seconds = rwd::seconds_since(start);
//
// Header-only and free of anything but the standard library, so that every part (the schedule
// included) may use it.
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

namespace rwd {

// A byte count in powers of 1024 with three significant digits: "512 B", "4.00 KiB",
// "78.2 MiB", "256 MiB", "1.50 GiB". Whole bytes below 1 KiB; up to EiB.
inline std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buffer[64];
  const char* spec = u == 0 || bytes >= 100.0 ? "%.0f %s" : bytes >= 10.0 ? "%.1f %s" : "%.2f %s";
  std::snprintf(buffer, sizeof buffer, spec, bytes, units[u]);
  return buffer;
}

// A path in single quotes, for messages: 'dir/file.h5'. (Built by appending: GCC 12 warns
// falsely (-Wrestrict) about "'" + std::string.)
inline std::string quoted(const std::filesystem::path& path) {
  std::string text(1, '\'');
  text += path.string();
  text += '\'';
  return text;
}

// Wall-clock seconds on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace rwd
