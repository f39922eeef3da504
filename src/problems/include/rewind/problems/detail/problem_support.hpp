// rewind/problems/detail/problem_support.hpp — helpers shared by the built-in problems.
//
// Not public API: include a problem header (rewind/problems/lorenz63.hpp, …) instead. What lives
// here: the size checks every rhs/vjp runs before touching memory, building a small backend
// vector from host values (parameters, initial states), and a counter-based hash that gives the
// same pseudo-random numbers on the host and on a device.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// Refuses a vector whose length is not the one the problem expects, naming the problem, the
// argument and both sizes. Called on entry to every rhs/vjp of the built-in problems: a handful of
// integer comparisons, so the contract "nothing silent" costs nothing measurable.
inline void require_length(const char* problem, const char* what, Index actual, Index expected) {
  if (actual != expected)
    fail<InvalidArgument>(problem, ": ", what, " has ", actual, " elements but must have ",
                          expected);
}

template <class B>
void require_rhs_sizes(const char* problem, Index n, Index p, const typename B::Vector& y,
                       const typename B::Vector& theta, const typename B::Vector& f) {
  require_length(problem, "state y", B::size(y), n);
  require_length(problem, "parameter vector theta", B::size(theta), p);
  require_length(problem, "output f", B::size(f), n);
}

template <class B>
void require_vjp_sizes(const char* problem, Index n, Index p, const typename B::Vector& y,
                       const typename B::Vector& theta, const typename B::Vector& v,
                       const typename B::Vector& out_y, const typename B::Vector& out_theta) {
  require_length(problem, "state y", B::size(y), n);
  require_length(problem, "parameter vector theta", B::size(theta), p);
  require_length(problem, "cotangent v", B::size(v), n);
  require_length(problem, "output out_y", B::size(out_y), n);
  require_length(problem, "output out_theta", B::size(out_theta), p);
}

// A new backend vector holding the given host values (setup code only: allocates).
template <class B>
typename B::Vector vector_from_host(std::span<const double> values) {
  typename B::Vector x = B::zeros(static_cast<Index>(values.size()));
  B::copy_from_host(values, x);
  return x;
}

template <class B>
typename B::Vector vector_from_host(std::initializer_list<double> values) {
  return vector_from_host<B>(std::span<const double>(values.begin(), values.size()));
}

// SplitMix64 finaliser: a bijective 64-bit mix. hash_uniform(seed, i) is a deterministic number in
// [-1, 1) that depends only on (seed, i), computed identically on host and device, so initial
// states with "random" noise can be generated in parallel and reproduced bit for bit.
REWIND_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

REWIND_HOST_DEVICE inline double hash_uniform(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t h = splitmix64(splitmix64(seed) ^ i);
  // 53 random bits -> [0, 1) exactly representable, then to [-1, 1).
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
}

// A vector–Jacobian product in one pass over memory on backends whose kernels run one index at a
// time (ThrustBackend): index k's parameter terms (returned, summed by the backend's fixed-order
// reduction) and its share of (∂f/∂y)ᵀ v (written), from one visit of the index, so that the
// values they both read are read from memory once. The parameter terms are taken first, from
// inputs no write has touched. Each index is visited exactly once by a reduction, so the writes
// are those of a separate element-wise kernel, and the sums keep their terms and their order.
template <int K, class StateKernel, class ParameterKernel>
struct OnePassVjpKernel {
  StateKernel state;
  ParameterKernel parameters;
  REWIND_HOST_DEVICE Sums<K> operator()(Index k) const {
    const Sums<K> terms = parameters(k);
    state(k);
    return terms;
  }
};

}  // namespace rwd::detail
