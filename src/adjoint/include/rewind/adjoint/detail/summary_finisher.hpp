// rewind/adjoint/detail/summary_finisher.hpp — the part of a Summary (rewind/adjoint/summary.hpp)
// that every adjoint driver fills the same way: what ran (method, schedule, backend, threads,
// ranks, sizes) and the work counts. Times, storage and health stay with each driver, which
// measures them its own way. Internal to the drivers.
#pragma once

#include <string>
#include <utility>

#include "rewind/adjoint/summary.hpp"
#include "rewind/backend/backend.hpp"
#include "rewind/parallel.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// A driver's counts, in Summary's conventions (summary.hpp: forward_steps = l + p,
// recomputed_steps = p).
struct SweepCounts {
  Index steps = 0;
  Index rejected_steps = 0;
  Index forward_steps = 0;
  Index recomputed_steps = 0;
  Index reversed_steps = 0;
  Index rhs_evaluations_forward = 0;
  Index rhs_evaluations_reverse = 0;
  Index vjp_evaluations = 0;
  Index stores = 0;
  Index restores = 0;
  double t_final = 0.0;
};

// Fills what ran and `counts` into `summary`; `method` is describe_method(stepper).
template <class B>
void finish_summary(Summary& summary, std::string method, std::string schedule, Index state_size,
                    Index parameter_size, const SweepCounts& counts) {
  summary.method = std::move(method);
  summary.schedule = std::move(schedule);
  summary.backend = B::name;
  summary.threads = thread_count();
  summary.ranks = process_count<B>();
  summary.state_size = state_size;
  summary.parameter_size = parameter_size;
  summary.steps = counts.steps;
  summary.rejected_steps = counts.rejected_steps;
  summary.forward_steps = counts.forward_steps;
  summary.recomputed_steps = counts.recomputed_steps;
  summary.reversed_steps = counts.reversed_steps;
  summary.rhs_evaluations_forward = counts.rhs_evaluations_forward;
  summary.rhs_evaluations_reverse = counts.rhs_evaluations_reverse;
  summary.vjp_evaluations = counts.vjp_evaluations;
  summary.stores = counts.stores;
  summary.restores = counts.restores;
  summary.t_final = counts.t_final;
}

}  // namespace rwd::detail
