// tests/distributed/distributed_test_support.hpp — what the MPI tests of the distributed problems
// share: the world communicator, bitwise comparison of this rank's values, the disk cost model
// of their two-level schedules, and a guard that restores the thread count.
#pragma once

#include <cstring>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::test {

inline Communicator world() {
  return Communicator::world();
}

// A disk slower than a step (writes 3, reads 2 steps), so the two-level schedule puts some
// snapshots in memory and some on disk.
inline CostModel slow_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  return costs;
}

// This rank's values of a distributed (or replicated) vector.
inline std::vector<double> local_values(const DistributedVector& x) {
  return std::vector<double>(x.local.data(), x.local.data() + x.local.size());
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}
inline bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Restores the thread count when a test ends, however it ends.
struct ThreadCountGuard {
  int saved = thread_count();
  ~ThreadCountGuard() { set_thread_count(saved); }
};

}  // namespace rwd::test
