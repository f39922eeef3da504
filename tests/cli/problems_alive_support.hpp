// Shared by problems_alive_test.cpp and problems_alive_long_test.cpp: a built-in problem run as
// `rewind run NAME [--n N] [--steps L] --snapshots 20` runs it (its defaults for everything not
// given: size, step, method), through the tool's own run (ProblemInfo::run), whose report carries
// the final state too. The tool's library compiled the runs already: every built-in problem's
// drivers and steppers are the heaviest code a test could instantiate.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <optional>
#include <string>

#include "../../src/cli/problem_registry.hpp"
#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/types.hpp"

namespace rwd::cli::testing {

struct Outcome {
  double loss = 0.0;
  Eigen::VectorXd y_final, grad_y0, grad_theta;
  Summary summary;

  bool gradient_finite() const {
    return std::isfinite(loss) && grad_y0.allFinite() && grad_theta.allFinite();
  }
  // Gray–Scott: the spatial standard deviation of v (the second half of the state).
  double std_of_v() const {
    const Eigen::ArrayXd v = y_final.tail(y_final.size() / 2).array();
    return std::sqrt((v - v.mean()).square().mean());
  }
};

// The gradient of the terminal squared norm of problem `name` at its `rewind run` defaults
// (n and steps overridden where given), with --snapshots 20.
Outcome run_like_the_cli(const std::string& name, std::optional<Index> n = {},
                         std::optional<Index> steps = {});

}  // namespace rwd::cli::testing
