// rewind/types.hpp — small shared value types.
#pragma once

#include <cstdint>

#include "rewind/host_device.hpp"

namespace rwd {

// Sizes and step counts are 64-bit everywhere: horizons of 10^8 steps and states of 10^6
// unknowns multiply past 2^31.
using Index = std::int64_t;

// K partial sums carried through one reduction pass, so that several inner products over the
// same data (e.g. the parameter gradient of a PDE right-hand side) cost one sweep of memory.
template <int K>
struct Sums {
  double v[K];

  REWIND_HOST_DEVICE static Sums zero() {
    Sums s{};
    for (int i = 0; i < K; ++i) s.v[i] = 0.0;
    return s;
  }
  REWIND_HOST_DEVICE double& operator[](int i) { return v[i]; }
  REWIND_HOST_DEVICE double operator[](int i) const { return v[i]; }
};

template <int K>
REWIND_HOST_DEVICE inline Sums<K> operator+(const Sums<K>& a, const Sums<K>& b) {
  Sums<K> s;
  for (int i = 0; i < K; ++i) s.v[i] = a.v[i] + b.v[i];
  return s;
}

}  // namespace rwd
