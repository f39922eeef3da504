// src/cli/text_report.hpp — `rewind run`'s report for a person at a terminal.
#pragma once

#include <iosfwd>

#include "run_report.hpp"

namespace rwd::cli {

// The problem and sizes, J, the gradient norms (and dJ/dθ itself when it has at most
// kMaxListedParameters entries), one line "degenerate: …" when the gradient is zero or
// negligible or the state stopped changing (rwd::GradientHealth), the finite-difference spot
// check, for checkpointed runs the schedule's counts, memory against store-all and the drift
// verdict, and Summary::full().
void print_text_report(std::ostream& out, const RunReport& report);

// A checkpointed run's plan, printed before it starts: the schedule, the predicted recompute
// ratio (l + p) / l and the predicted time in forward runs.
void print_plan_prediction(std::ostream& out, const CheckpointReport& checkpoint);

inline constexpr Index kMaxListedParameters = 8;

}  // namespace rwd::cli
