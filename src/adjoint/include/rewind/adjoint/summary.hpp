// rewind/adjoint/summary.hpp — what a gradient computation did, returned with every result.
//
//   auto result = driver.run(y0, theta);
//   std::cout << result.summary.brief() << "\n";   // one line
//   std::cout << result.summary.full();            // a table
//
// Conventions (Griewank & Walther's, so figures compare with every revolve code): each reverse
// step re-runs its own forward step to rebuild the stages, so a run of l steps evaluates at
// least l forward steps; `recomputed_steps` = p counts the forward steps beyond those l (the
// schedule's advances: for revolve p(l, c) = r·l − β(c + 1, r − 1)), and `forward_steps` =
// l + p counts them all. Every run also takes one step from y_{l−1} to y_l for the
// terminal cost, which is in rhs_evaluations but not in these counts.
#pragma once

#include <cstdint>
#include <string>

#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct Summary {
  std::string method;    // integrator and step control, e.g. "rk4, fixed dt = 0.01"
  std::string schedule;  // "store-all", "revolve(c = 20)", ...
  std::string backend;   // "eigen", "thrust"
  int threads = 1;       // rwd::thread_count() during the run (the gradient does not depend on it)
  int ranks = 1;         // processes sharing the state (MPI ranks; the gradient does not depend
                         // on it either); counts and bytes in `storage` are per process
  Index state_size = 0;
  Index parameter_size = 0;

  Index steps = 0;             // N: accepted steps of the run
  Index rejected_steps = 0;    // rejected adaptive attempts during the first forward sweep
  Index forward_steps = 0;     // l + p: every forward step evaluated, reverse re-runs included
  Index recomputed_steps = 0;  // p: forward steps beyond the l that the reverse steps re-run
  Index reversed_steps = 0;    // adjoint steps (= steps when complete)
  Index rhs_evaluations_forward = 0;  // f calls in the first sweep and recomputation
  Index rhs_evaluations_reverse = 0;  // f calls inside adjoint steps (stage rebuilds)
  Index vjp_evaluations = 0;
  Index stores = 0;    // states written to storage
  Index restores = 0;  // states read back from storage
  // What the snapshot store did: stores, restores and peak bytes per storage level
  // (storage.levels, those of the plan, fastest first), the snapshot file, disk traffic and time
  // (zero without a disk level). Store-all and backsolve give one memory level holding what they
  // keep.
  SnapshotStoreStatistics storage;

  // Allocating storage before the first step: store-all's trajectory (zeroed, so its pages are
  // touched), a checkpointed run's store, its snapshot file and stage buffers.
  double setup_seconds = 0.0;
  double forward_seconds = 0.0;    // first forward sweep
  double recompute_seconds = 0.0;  // replays from snapshots
  double reverse_seconds = 0.0;    // adjoint steps
  double t_final = 0.0;            // time reached by the run
  // Whether the gradient says anything: negligible or zero, or a state that stopped changing
  // before the end (gradient_health.hpp). brief() and full() say so in one line when it does not.
  GradientHealth health;

  // The gradient's wall time, setup included: what a user timing the call measures.
  double total_seconds() const {
    return setup_seconds + forward_seconds + recompute_seconds + reverse_seconds;
  }
  // Disk time that overlapped computation (write + read − wait, at least 0).
  double disk_hidden_seconds() const {
    const double hidden =
        storage.io.write_seconds + storage.io.read_seconds - storage.io.wait_seconds;
    return hidden > 0.0 ? hidden : 0.0;
  }
  // (setup + forward + recompute + reverse) / forward: the cost of a gradient in forward runs.
  // `forward` is the first sweep, stores included, so against a plain forward run
  // (rwd::forward_loss) the ratio reads low where storing a state costs much against a step
  // (store-all at 10^5 unknowns: 4.67 here, 6.06 by the wall clock; bench/results/
  // gradient_cost.md).
  double gradient_cost_ratio() const {
    return forward_seconds > 0.0 ? total_seconds() / forward_seconds : 0.0;
  }

  std::string brief() const;  // one line (ending in health.describe() when degenerate)
  std::string full() const;   // several lines, one quantity each
};

}  // namespace rwd
