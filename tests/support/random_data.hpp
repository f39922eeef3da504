// Seeded random test data: vectors of uniform or standard normal numbers, as Eigen vectors or as
// host buffers (std::vector<double>).
//
//   std::mt19937_64 rng(63);                                   // one generator per test, seeded
//   const Eigen::VectorXd y = rwd::testing::random_vector(3, rng, -20.0, 20.0);
//   const Eigen::VectorXd v = rwd::testing::random_vector(3, rng);          // in [−1, 1)
//   const std::vector<double> h = rwd::testing::random_values(513, /*seed=*/7);
//
// Every function draws its n numbers in index order from the generator it is given (or from a
// fresh std::mt19937_64 seeded with `seed`), through a distribution object of its own: successive
// calls on one generator continue its sequence, so a test that draws y, then θ, then v sees the
// same numbers on every run. std::mt19937_64 is the same everywhere; the standard library's
// distributions are not, so the values are reproducible for one standard library, not across
// them — tests compare properties at these points, never the points themselves. (Where values must
// agree across platforms, use a counter-based hash such as rwd::detail::hash_uniform.)
//
// Under nvcc (the CUDA conformance test) only the host-buffer functions exist: the project does
// not compile Eigen with nvcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "rewind/types.hpp"

#if !defined(__CUDACC__)
#include <Eigen/Core>
#endif

namespace rwd::testing {

// n numbers uniform in [lo, hi), drawn from rng.
inline std::vector<double> random_values(Index n, std::mt19937_64& rng, double lo = -1.0,
                                         double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& xi : x) xi = dist(rng);
  return x;
}

// n numbers uniform in [lo, hi), drawn from a fresh generator seeded with `seed`.
inline std::vector<double> random_values(Index n, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
  std::mt19937_64 rng(seed);
  return random_values(n, rng, lo, hi);
}

#if !defined(__CUDACC__)

// n numbers uniform in [lo, hi), drawn from rng: the same numbers random_values would draw.
inline Eigen::VectorXd random_vector(Index n, std::mt19937_64& rng, double lo = -1.0,
                                     double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Eigen::VectorXd x(n);
  for (Index i = 0; i < n; ++i) x[i] = dist(rng);
  return x;
}

// n standard normal numbers drawn from rng (a fresh std::normal_distribution per call, so no
// value cached by one call leaks into the next).
inline Eigen::VectorXd random_normal_vector(Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::VectorXd x(n);
  for (Index i = 0; i < n; ++i) x[i] = normal(rng);
  return x;
}

#endif

}  // namespace rwd::testing
