// The stop-and-resume check of the implicit engines' tests (implicit_adjoint_test,
// rosenbrock_adjoint_test): Robertson that requests a stop (what SIGINT does) at a given
// right-hand side call, and a run on disk stopped three times — deep into both sweeps — then
// resumed, against the uninterrupted store-all bits.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include <Eigen/Core>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"

namespace rwd::testing {

// Robertson (with its Jacobian and second derivatives, autonomous) that requests a stop at right-
// hand side call `stop_at` (counted in `calls`; -1: never).
struct StoppingRobertson {
  using Backend = EigenBackend;
  using Vector = Eigen::VectorXd;
  static constexpr bool autonomous = true;
  Robertson inner;
  mutable Index calls = 0;
  Index stop_at = -1;
  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& th, Vector& f) const {
    if (calls++ == stop_at) request_stop(0);
    inner.rhs(t, y, th, f);
  }
  void vjp(double t, const Vector& y, const Vector& th, const Vector& v, Vector& oy,
           Vector& ot) const {
    inner.vjp(t, y, th, v, oy, ot);
  }
  void jacobian(double t, const Vector& y, const Vector& th, Eigen::MatrixXd& J) const {
    inner.jacobian(t, y, th, J);
  }
  void jvp_vjp(double t, const Vector& y, const Vector& th, const Vector& u, const Vector& w,
               Vector& oy, Vector& ot) const {
    inner.jvp_vjp(t, y, th, u, w, oy, ot);
  }
};

// `stepper` runs over `problem`: its store-all gradient, then a resumable run on disk under
// revolve(4) stopped three times at a fifth of a whole run's right-hand sides each (every attempt
// resuming where the last stopped), then run to the end — whose gradient must be the store-all
// bits, with no drift, and its file gone.
template <class Stepper>
void expect_stopped_runs_resume_to_the_same_bits(Stepper& stepper, StoppingRobertson& problem) {
  const Eigen::VectorXd y0 = problem.inner.default_initial_state();
  const Eigen::VectorXd theta = problem.inner.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto same_bits = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) ==
               0;
  };
  problem.stop_at = -1;
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  test::ScratchDirectory scratch;
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  options.disk.resume = true;
  options.drift_policy = DriftPolicy::fail;
  options.progress_interval_seconds = 0.0;
  problem.calls = 0;
  {
    CheckpointOptions plain;
    plain.disk.directory = scratch.path();
    CheckpointedAdjoint counting(stepper, objective, plain);
    counting.run(y0, theta, on_disk(revolve_schedule(4)));
  }
  const Index total = problem.calls;
  ASSERT_GT(total, 100);
  for (Index stop : {total / 5, total / 5, total / 5}) {
    SCOPED_TRACE(stop);
    clear_stop_request();
    problem.calls = 0;
    problem.stop_at = stop;
    CheckpointedAdjoint driver(stepper, objective, options);
    EXPECT_THROW(driver.run(y0, theta, on_disk(revolve_schedule(4))), Interrupted);
  }
  clear_stop_request();
  problem.stop_at = -1;
  CheckpointedAdjoint driver(stepper, objective, options);
  const auto resumed = driver.run(y0, theta, on_disk(revolve_schedule(4)));
  EXPECT_TRUE(same_bits(resumed.grad_theta, reference.grad_theta));
  EXPECT_TRUE(same_bits(resumed.grad_y0, reference.grad_y0));
  EXPECT_TRUE(scratch.files().empty()) << "a completed run removes its file";
}

}  // namespace rwd::testing
