// Central finite differences of a whole run's loss, for gradient tests.
#pragma once

#include <Eigen/Core>
#include <random>

#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/objective.hpp"
#include "support/random_data.hpp"

namespace rwd::testing {

struct DirectionalCheck {
  double adjoint;  // ⟨∇J, d⟩
  double fd;       // (J(x + εd) − J(x − εd)) / 2ε
  double rel_error() const {
    return std::abs(adjoint - fd) / std::max({std::abs(adjoint), std::abs(fd), 1e-12});
  }
};

// A unit vector in a random direction: normal numbers from a generator seeded with `seed`.
inline Eigen::VectorXd random_direction(Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Eigen::VectorXd d = random_normal_vector(n, rng);
  return d / d.norm();
}

// Checks dJ/dy0 (which = 0) or dJ/dθ (which = 1) along a random unit direction.
template <class Stepper>
DirectionalCheck directional_fd(Stepper& stepper, const Objective<EigenBackend>& objective,
                                const Eigen::VectorXd& y0, const Eigen::VectorXd& theta,
                                const Eigen::VectorXd& gradient, int which, std::uint64_t seed,
                                double eps) {
  const Eigen::VectorXd d = random_direction(which == 0 ? y0.size() : theta.size(), seed);
  auto loss_at = [&](double s) {
    Eigen::VectorXd y = y0, th = theta;
    if (which == 0)
      y += s * d;
    else
      th += s * d;
    return forward_loss(stepper, objective, y, th);
  };
  return {gradient.dot(d), (loss_at(eps) - loss_at(-eps)) / (2 * eps)};
}

}  // namespace rwd::testing
