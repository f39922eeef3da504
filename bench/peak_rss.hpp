// bench/peak_rss.hpp — the peak resident set size of this process (VmHWM), for benchmarks that
// report memory; one variant per process, so the figure is the variant's own.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace rwd::bench {

// Bytes, from /proc/self/status; −1 where that file does not exist (not Linux).
inline long long peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atoll(line.c_str() + 6) * 1024LL;
  return -1;
}

}  // namespace rwd::bench
