// Moving backend vectors to and from host buffers (std::vector<double>) in tests, through the
// backend's own copy_to_host/copy_from_host — the only way the tests look into a device vector.
//
//   const auto x = rwd::testing::to_backend<rwd::ThrustBackend>({1.0, 2.0, 3.0});
//   const std::vector<double> h = rwd::testing::to_host<rwd::ThrustBackend>(x);
//
// Allocates: for test set-up and comparisons, not for code whose allocations a test counts.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "rewind/types.hpp"

namespace rwd::testing {

// A new backend vector holding the host values.
template <class B>
typename B::Vector to_backend(const std::vector<double>& host) {
  typename B::Vector x = B::zeros(static_cast<Index>(host.size()));
  B::copy_from_host(std::span<const double>(host), x);
  return x;
}

// The values of a backend vector, on the host.
template <class B>
std::vector<double> to_host(const typename B::Vector& x) {
  std::vector<double> host(static_cast<std::size_t>(B::size(x)));
  B::copy_to_host(x, std::span<double>(host));
  return host;
}

}  // namespace rwd::testing
