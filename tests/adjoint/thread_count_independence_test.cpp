// Contract 2 extended to threads: the gradient, the loss and the final state are the same bits
// for 1, 2 and 3 threads (rwd::set_thread_count), for every built-in PDE on grids large enough
// that its loops really run on several threads (loops of detail::kParallelMinElements values and
// more, rows and vectors alike), under revolve, uniform, two-level memory + disk and store-all
// schedules, fixed and adaptive Runge–Kutta, and BDF through CVODES.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

// The bits of one run: loss, gradients, final state.
struct RunBits {
  std::vector<double> values;
  bool operator==(const RunBits& other) const {
    return values.size() == other.values.size() &&
           std::memcmp(values.data(), other.values.data(), values.size() * sizeof(double)) == 0;
  }
};

template <class Result>
RunBits bits_of(const Result& r) {
  RunBits b;
  b.values.push_back(r.loss);
  b.values.insert(b.values.end(), r.grad_theta.data(), r.grad_theta.data() + r.grad_theta.size());
  b.values.insert(b.values.end(), r.grad_y0.data(), r.grad_y0.data() + r.grad_y0.size());
  b.values.insert(b.values.end(), r.y_final.data(), r.y_final.data() + r.y_final.size());
  return b;
}

// Runs `run` with 1, 2 and 3 threads and expects the same bits each time.
void expect_same_bits_for_every_thread_count(const std::string& what,
                                             const std::function<RunBits()>& run) {
  SCOPED_TRACE(what);
  const int saved = thread_count();
  set_thread_count(1);
  const RunBits reference = run();
  ASSERT_GT(reference.values.size(), 1u);
  if (kThreadsAvailable) {
    for (int t : {2, 3}) {
      set_thread_count(t);
      EXPECT_TRUE(run() == reference) << t << " threads changed the bits";
    }
  }
  set_thread_count(saved);
}

CostModel slow_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  return costs;
}

template <class Stepper>
void check_schedules(const std::string& name, Stepper& stepper, const V& y0, const V& theta) {
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  test::ScratchDirectory scratch;
  const std::vector<std::pair<std::string, Planner>> schedules = {
      {"revolve c=3", revolve_schedule(3)},
      {"uniform k=5", uniform_schedule(5)},
      {"two-level 2+3 disk", two_level_schedule(2, 3, slow_disk())}};
  for (const auto& [schedule, planner] : schedules) {
    expect_same_bits_for_every_thread_count(name + ", " + schedule, [&] {
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      options.disk.directory = scratch.path();
      CheckpointedAdjoint driver(stepper, objective, options);
      return bits_of(driver.run(y0, theta, planner));
    });
  }
  expect_same_bits_for_every_thread_count(name + ", store-all", [&] {
    StoreAllAdjoint driver(stepper, objective);
    return bits_of(driver.run(y0, theta));
  });
}

TEST(ThreadCountIndependence, GrayScottUnderEverySchedule) {
  const GrayScott<> problem(128);  // 128 rows, 32768 unknowns: rows and vectors run threaded
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name("rk4"),
                             StepControl::fixed(0.0, 1.0, 24));
  check_schedules("gray-scott", stepper, problem.default_initial_state(1),
                  problem.default_parameters());
}

TEST(ThreadCountIndependence, Heat2DFixedSteps) {
  const Heat2D<> problem(192);  // 36864 unknowns: rows and vectors run threaded
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name("rk4"),
                             StepControl::fixed(0.0, 0.5 * problem.max_stable_dt_rk4(), 16));
  check_schedules("heat2d", stepper, problem.default_initial_state(), problem.default_parameters());
}

TEST(ThreadCountIndependence, Lorenz96AdaptiveSteps) {
  // Adaptive steps: the error norm decides every step size, so a thread-dependent norm would
  // change the number of steps, not just the last bits.
  const Lorenz96<> problem(70001);
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name("dopri5"),
                             StepControl::adaptive(0.0, 0.3, 1e-7, 1e-9));
  check_schedules("lorenz96 dopri5", stepper, problem.default_initial_state(),
                  problem.default_parameters());
}

TEST(ThreadCountIndependence, BrusselatorBdfWithMatrixFreeGmres) {
  const Brusselator2D problem(128);  // 32768 unknowns: rhs, jvp and vjp rows run threaded
  CvodesOptions o;
  o.rtol = o.rtol_adjoint = 1e-6;
  o.atol = {1e-8};
  o.atol_adjoint = o.atol_quadrature = 1e-8;
  o.linear_solver = CvodesLinearSolver::gmres;
  CvodesIntervalStepper stepper(problem, o, IntervalGrid{0.0, 0.02, 4});
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  expect_same_bits_for_every_thread_count("brusselator bdf, revolve c=2", [&] {
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    return bits_of(driver.run(y0, theta, revolve_schedule(2)));
  });
}

}  // namespace
}  // namespace rwd
