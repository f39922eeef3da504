// src/cli/exit_status.hpp — how the `rewind` tool ends, and its one-line error messages.
//
//   return rwd::cli::fail_with(rwd::cli::kExitBadInput, "unknown problem 'foo'");
//   // stderr: "rewind: error: unknown problem 'foo'", exit status 2
#pragma once

#include <iostream>
#include <string>
#include <string_view>

namespace rwd::cli {

inline constexpr int kExitSuccess = 0;
// The run could not be completed: NaN/Inf in a state or adjoint, a solver failure (step size
// underflow, too many rejections), out of memory, any other runtime failure.
inline constexpr int kExitFailure = 1;
// The command line was refused before any work: unknown problem, option or method, a value out
// of range (rwd::InvalidArgument and CLI11's parse errors).
inline constexpr int kExitBadInput = 2;

// Prints "rewind: error: <message>" as exactly one line on stderr and returns status.
inline int fail_with(int status, std::string_view message) {
  std::string line(message);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "rewind: error: " << line << std::endl;
  return status;
}

}  // namespace rwd::cli
