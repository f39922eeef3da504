// src/cli/text_report.hpp — `rewind run`'s report for a person at a terminal.
#pragma once

#include <iosfwd>

#include "run_report.hpp"

namespace rwd::cli {

// The problem and sizes, J, the gradient norms (and dJ/dθ itself when it has at most
// kMaxListedParameters entries), the finite-difference spot check, and Summary::full().
void print_text_report(std::ostream& out, const RunReport& report);

inline constexpr Index kMaxListedParameters = 8;

}  // namespace rwd::cli
