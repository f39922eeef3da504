// tests/distributed/distributed_test_support.hpp — what the MPI tests of the distributed problems
// share: the world communicator, bitwise comparison of this rank's values, the disk cost model
// of their two-level schedules, a guard that restores the thread count, and a Gray–Scott that
// calls back after every right-hand side.
#pragma once

#include <cstring>
#include <functional>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::test {

inline Communicator world() {
  return Communicator::world();
}

// DistributedGrayScott with a hook called after every right-hand side with the number of them
// so far (on every rank alike): a place to damage a file or request a stop mid-run.
struct HookedGrayScott {
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  static constexpr const char* name = "gray-scott";

  const DistributedGrayScott& inner;
  std::function<void(Index)> hook;
  mutable Index calls = 0;

  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    inner.rhs(t, y, theta, f);
    if (hook) hook(++calls);
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& a, Vector& out_y,
           Vector& out_theta) const {
    inner.vjp(t, y, theta, a, out_y, out_theta);
  }
};

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
