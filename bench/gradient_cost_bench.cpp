// bench/gradient_cost_bench.cpp — what a store-all gradient costs, in forward runs.
//
//   cmake --build build-bench --target gradient_cost_bench
//   build-bench/bench/gradient_cost_bench                  # every benchmark, console table
//   bench/run_gradient_cost.sh                             # the same, plus the ratio table
//
// For RK4 with fixed steps on Lorenz-96 (N = 40 and N = 10^5) and Gray–Scott (2·71² ≈ 10^4 and
// 2·708² ≈ 10^6 unknowns), with every state stored, each started from a living state (a grown
// Gray–Scott labyrinth, a Lorenz-96 state chaotic at every site: bench/living_states.hpp):
//
//   Forward/<case>   one forward sweep that stores nothing (rwd::forward_loss);
//   Gradient/<case>  the full store-all gradient (StoreAllAdjoint::run), with a forward sweep
//                    timed next to it in every iteration so that the ratio
//                    gradient_ms / forward_ms compares runs taken side by side;
//   GradientFirstCall/<case>  Gradient/ with a new driver per call, as a program that asks for
//                    one gradient: allocating the stored states is part of it (the driver's
//                    Summary::setup_seconds), so drv_ratio should match ratio;
//   GradientStages/<case>  the same with every step's stage values stored instead
//                    (CheckpointedAdjoint with store_all_stages_schedule): the reverse sweep
//                    re-runs no step, so ratio ≈ 1 + (4 vjp + adjoint vector work) / step;
//   Rhs/<case>, Vjp/<case>, Rk4Step/<case>, Rk4AdjointStep/<case>
//                    the pieces of one step, which explain the ratio: the RK4
//                    adjoint step re-runs its forward step (4 rhs) and adds 4 vjp, so
//                    ratio ≈ 2 + (4 vjp + adjoint vector work) / (forward step);
//   AllFinite/1e6, LinearCombination/1e6_*   the vector operations of a step at 10^6.
//
// Counters of Gradient/<case> (medians over the iterations):
//   fwd_ms, grad_ms                 forward_loss and StoreAllAdjoint::run, wall time
//   ratio                           grad_ms / fwd_ms of each iteration (the two runs back to back)
//   ratio_cpu                       the same ratio from thread CPU times (steadier on a busy
//                                   machine: time spent descheduled does not count)
//   drv_fwd_ms, drv_rev_ms, drv_ratio   the driver's own split (Summary::forward_seconds,
//                                   reverse_seconds, gradient_cost_ratio())
//   rhs_fwd/step, rhs_rev/step, vjp/step   evaluation counts per step
//   allocs/run                      malloc calls in one run() after the first (the first
//                                   allocates the stored states); constant, never ∝ steps
//   start_spread, start_active      how alive the starting state is (Forward/ and Gradient*/):
//                                   Gray–Scott std(v) and the share of cells with v > 0.05,
//                                   Lorenz-96 std(y) and the share of sites with |y_i − F| > 0.1
//
// Timing: manual (steady_clock around each run), fixed iteration counts, single thread; the
// driver object is reused across iterations so that the stored states are allocated (and their
// pages touched) once, before timing, as in any repeated gradient evaluation.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/rewind.hpp"
#include "rewind/schedule/schedules.hpp"

#include "living_states.hpp"

// ---- allocation counter: Eigen allocates through malloc, so count at malloc itself -------------
namespace {
std::atomic<long> g_allocations{0};
}

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* malloc(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, size);
}
}

namespace {

using rwd::Index;
using B = rwd::EigenBackend;
using Vec = B::Vector;
using Clock = std::chrono::steady_clock;

long allocations() {
  return g_allocations.load(std::memory_order_relaxed);
}

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// CPU time of this thread: robust against other processes taking the core for a while.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// One benchmark case: a problem, a fixed RK4 step, a number of steps and how often to repeat.
struct Case {
  const char* name;
  double dt;
  Index steps;
  int forward_iterations;   // Forward/<case>
  int gradient_iterations;  // Gradient/<case>
};

// Lorenz-96: dt = 0.01; the horizons (t = 20 and t = 1) keep the chaotic adjoint finite
// (it grows like e^{1.7 t}). Gray–Scott: dt = 1 (RK4's diffusion limit for the default
// parameters is 2.18, see gray_scott.hpp).
constexpr Case kL96Small{"lorenz96_N40", 0.01, 2000, 100, 100};
constexpr Case kL96Large{"lorenz96_N1e5", 0.01, 100, 20, 20};
constexpr Case kGsSmall{"grayscott_n71", 1.0, 1000, 20, 20};
constexpr Case kGsLarge{"grayscott_n708", 1.0, 20, 10, 10};

// How alive the state a case starts from is (bench/living_states.hpp), beside its timings.
template <class P>
void set_liveness(benchmark::State& state, const P& problem, const Vec& y0) {
  const bench::Liveness l = bench::liveness(problem, y0);
  state.counters["start_spread"] = l.spread;
  state.counters["start_active"] = l.active;
}

template <class P>
void forward_benchmark(benchmark::State& state, const P& problem, Case c, const Vec& y0) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, c.dt, c.steps));
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  const Vec theta = problem.default_parameters();
  benchmark::DoNotOptimize(rwd::forward_loss(stepper, objective, y0, theta));  // warm-up
  std::vector<double> ms;
  long allocs = 0;
  for (auto _ : state) {
    const long a0 = allocations();
    const auto start = Clock::now();
    double loss = rwd::forward_loss(stepper, objective, y0, theta);
    const double t = elapsed_ms(start);
    allocs = allocations() - a0;
    benchmark::DoNotOptimize(loss);
    state.SetIterationTime(t * 1e-3);
    ms.push_back(t);
  }
  state.counters["unknowns"] = static_cast<double>(problem.state_size());
  state.counters["steps"] = static_cast<double>(c.steps);
  state.counters["fwd_ms"] = median(ms);
  state.counters["allocs/run"] = static_cast<double>(allocs);
  set_liveness(state, problem, y0);
}

// Times `run` (one gradient) against a forward run of `stepper`, side by side per iteration.
template <class P, class Stepper, class Objective, class Run>
void measure_gradient(benchmark::State& state, const P& problem, Stepper& stepper,
                      const Objective& objective, const Vec& y0, const Vec& theta, Run&& run) {
  {  // warm-up: allocates and touches the stored states, checks the gradient is finite
    const auto r = run();
    if (!B::all_finite(r.grad_y0) || !B::all_finite(r.grad_theta)) {
      state.SkipWithError("non-finite gradient: shorten the horizon");
      return;
    }
    benchmark::DoNotOptimize(rwd::forward_loss(stepper, objective, y0, theta));
  }
  std::vector<double> fwd, grad, fwd_cpu, grad_cpu, drv_fwd, drv_rev, drv_ratio;
  rwd::Summary summary;
  long allocs = 0;
  for (auto _ : state) {
    double cpu = thread_cpu_ms();
    auto start = Clock::now();
    double loss = rwd::forward_loss(stepper, objective, y0, theta);
    fwd.push_back(elapsed_ms(start));
    fwd_cpu.push_back(thread_cpu_ms() - cpu);
    benchmark::DoNotOptimize(loss);

    const long a0 = allocations();
    cpu = thread_cpu_ms();
    start = Clock::now();
    auto result = run();
    const double t = elapsed_ms(start);
    grad_cpu.push_back(thread_cpu_ms() - cpu);
    allocs = allocations() - a0;
    benchmark::DoNotOptimize(result.grad_theta.data());
    state.SetIterationTime(t * 1e-3);
    grad.push_back(t);
    summary = result.summary;
    drv_fwd.push_back(summary.forward_seconds * 1e3);
    drv_rev.push_back(summary.reverse_seconds * 1e3);
    drv_ratio.push_back(summary.gradient_cost_ratio());
  }
  const double steps = static_cast<double>(summary.steps);
  state.counters["unknowns"] = static_cast<double>(problem.state_size());
  state.counters["steps"] = steps;
  state.counters["fwd_ms"] = median(fwd);
  state.counters["grad_ms"] = median(grad);
  // Ratios per iteration (a forward run and the gradient right after it), then the median:
  // steadier than a ratio of medians when the machine's load changes during the benchmark.
  std::vector<double> ratio, ratio_cpu;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    ratio.push_back(grad[i] / fwd[i]);
    ratio_cpu.push_back(grad_cpu[i] / fwd_cpu[i]);
  }
  state.counters["ratio"] = median(ratio);
  state.counters["ratio_cpu"] = median(ratio_cpu);
  state.counters["drv_fwd_ms"] = median(drv_fwd);
  state.counters["drv_rev_ms"] = median(drv_rev);
  state.counters["drv_ratio"] = median(drv_ratio);
  state.counters["rhs_fwd/step"] = static_cast<double>(summary.rhs_evaluations_forward) / steps;
  state.counters["rhs_rev/step"] = static_cast<double>(summary.rhs_evaluations_reverse) / steps;
  state.counters["vjp/step"] = static_cast<double>(summary.vjp_evaluations) / steps;
  state.counters["allocs/run"] = static_cast<double>(allocs);
  state.counters["stored_MiB"] =
      static_cast<double>(summary.storage.peak_bytes_on(rwd::LevelKind::memory)) / (1 << 20);
}

// How the gradient keeps what its reverse sweep needs.
enum class Stored {
  states,             // StoreAllAdjoint: every state; each reverse step re-runs its forward step
  states_first_call,  // the same with a new driver per gradient, as a program calling it once:
                      // allocating and touching the stored states is part of the run
  stages,  // CheckpointedAdjoint with store_all_stages_schedule: every step's stage values;
           // the reverse sweep re-runs nothing
};

template <class P>
void gradient_benchmark(benchmark::State& state, const P& problem, Case c, const Vec& y0,
                        Stored stored) {
  using Stepper = rwd::ExplicitRungeKutta<P>;
  Stepper stepper(problem, rwd::ButcherTableau::rk4(), rwd::StepControl::fixed(0.0, c.dt, c.steps));
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  const Vec theta = problem.default_parameters();
  set_liveness(state, problem, y0);
  if (stored == Stored::states) {
    rwd::StoreAllAdjoint driver(stepper, objective);
    measure_gradient(state, problem, stepper, objective, y0, theta,
                     [&] { return driver.run(y0, theta); });
  } else if (stored == Stored::states_first_call) {
    measure_gradient(state, problem, stepper, objective, y0, theta, [&] {
      rwd::StoreAllAdjoint driver(stepper, objective);
      return driver.run(y0, theta);
    });
  } else {
    rwd::CheckpointedAdjoint driver(stepper, objective);
    const rwd::Planner stages = rwd::store_all_stages_schedule(stepper.stage_count());
    measure_gradient(state, problem, stepper, objective, y0, theta,
                     [&] { return driver.run(y0, theta, stages); });
  }
}

// ---- the pieces of one step --------------------------------------------------------------------

template <class P>
struct StepFixture {
  const P& problem;
  Vec theta, y, f, v, out_y, out_theta;
  StepFixture(const P& p, const Vec& y0)
      : problem(p),
        theta(p.default_parameters()),
        y(y0),
        f(B::zeros(p.state_size())),
        v(B::zeros(p.state_size())),
        out_y(B::zeros(p.state_size())),
        out_theta(B::zeros(p.parameter_size())) {
    p.rhs(0.0, y, theta, f);  // a cotangent with the shape of a real one
    v = f;
  }
};

void set_items(benchmark::State& state, Index n) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
  state.counters["unknowns"] = static_cast<double>(n);
}

template <class P>
void rhs_benchmark(benchmark::State& state, const P& problem, const Vec& y0) {
  StepFixture<P> s(problem, y0);
  for (auto _ : state) {
    problem.rhs(0.0, s.y, s.theta, s.f);
    benchmark::ClobberMemory();
  }
  set_items(state, problem.state_size());
}

template <class P>
void vjp_benchmark(benchmark::State& state, const P& problem, const Vec& y0) {
  StepFixture<P> s(problem, y0);
  for (auto _ : state) {
    problem.vjp(0.0, s.y, s.theta, s.v, s.out_y, s.out_theta);
    benchmark::ClobberMemory();
  }
  set_items(state, problem.state_size());
}

template <class P>
void rk4_step_benchmark(benchmark::State& state, const P& problem, const Vec& y0, double dt) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, Index{1} << 40));
  StepFixture<P> s(problem, y0);
  rwd::Carry carry = stepper.initial_carry(s.y, s.theta);
  for (auto _ : state) {
    // Always the same step (y restored outside the timed region would cost a copy; the state
    // drifts by a few steps at most over the iterations, which does not change the cost).
    stepper.step(s.y, carry, s.theta);
    benchmark::ClobberMemory();
  }
  set_items(state, problem.state_size());
}

template <class P>
void rk4_adjoint_step_benchmark(benchmark::State& state, const P& problem, const Vec& y0,
                                double dt) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, 1));
  StepFixture<P> s(problem, y0);
  const rwd::Carry carry = stepper.initial_carry(s.y, s.theta);
  Vec lambda = s.v;
  Vec mu = B::zeros(problem.parameter_size());
  Index k = 0;
  for (auto _ : state) {
    stepper.adjoint_step(s.y, carry, s.theta, lambda, mu);
    // Reversing the same step again and again multiplies λ by the same Jacobian: rescale now
    // and then so that it never overflows (2 passes every 64 adjoint steps).
    if ((++k & 63) == 0) {
      const double m = B::max_norm(lambda);
      if (m > 1e6) B::scale(1.0 / m, lambda);
      B::fill(mu, 0.0);
    }
    benchmark::ClobberMemory();
  }
  set_items(state, problem.state_size());
}

// One drift fingerprint of the problem's state (DriftMonitor::record: a hash and four
// projections in one reduction pass), the cost the monitor adds to each sampled step.
template <class P>
void drift_fingerprint_benchmark(benchmark::State& state, const P& problem, const Vec& y0) {
  StepFixture<P> s(problem, y0);
  rwd::DriftMonitor<B> monitor(/*steps=*/0, problem.state_size(), rwd::DriftPolicy::ignore, 1);
  for (auto _ : state) {
    monitor.record(0, s.y);
    benchmark::ClobberMemory();
  }
  set_items(state, problem.state_size());
}

void all_finite_benchmark(benchmark::State& state, Index n) {
  const Vec x = Vec::LinSpaced(static_cast<Eigen::Index>(n), 0.0, 1.0);
  for (auto _ : state) benchmark::DoNotOptimize(B::all_finite(x));
  set_items(state, n);
}

// out = x + Σ_{j<terms} c_j v_j: the RK4 stage (1 term), κ (1 term) and final (4 terms) shapes.
void linear_combination_benchmark(benchmark::State& state, Index n, int terms) {
  std::vector<Vec> v(static_cast<std::size_t>(terms),
                     Vec::Constant(static_cast<Eigen::Index>(n), 0.5));
  std::vector<const Vec*> vp;
  std::vector<double> c(static_cast<std::size_t>(terms), 0.25);
  for (const auto& x : v) vp.push_back(&x);
  const Vec x = Vec::Ones(static_cast<Eigen::Index>(n));
  Vec out = B::zeros(n);
  for (auto _ : state) {
    B::linear_combination(out, 1.0, x, c, vp);
    benchmark::ClobberMemory();
  }
  set_items(state, n);
}

void register_all() {
  // Problems and the states they start from live for the whole program; benchmarks keep
  // references to them. Growing the states takes about a second (bench/living_states.hpp).
  static const rwd::Lorenz96<> l96_small(40);
  static const rwd::Lorenz96<> l96_large(100000);
  static const rwd::GrayScott<> gs_small(71);
  static const rwd::GrayScott<> gs_large(708);
  static const Vec l96_small_y0 = bench::living_state(l96_small);
  static const Vec l96_large_y0 = bench::living_state(l96_large);
  static const Vec gs_small_y0 = bench::living_state(gs_small);
  static const Vec gs_large_y0 = bench::living_state(gs_large);

  auto cases = [](const char* kind, auto fn) {
    auto reg = [&](const Case& c, const auto& problem, const Vec& y0, int iterations) {
      benchmark::RegisterBenchmark(
          (std::string(kind) + "/" + c.name).c_str(),
          [&problem, &y0, c, fn](benchmark::State& s) { fn(s, problem, c, y0); })
          ->Iterations(iterations)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    };
    const bool fwd = std::string(kind) == "Forward";
    reg(kL96Small, l96_small, l96_small_y0,
        fwd ? kL96Small.forward_iterations : kL96Small.gradient_iterations);
    reg(kL96Large, l96_large, l96_large_y0,
        fwd ? kL96Large.forward_iterations : kL96Large.gradient_iterations);
    reg(kGsSmall, gs_small, gs_small_y0,
        fwd ? kGsSmall.forward_iterations : kGsSmall.gradient_iterations);
    reg(kGsLarge, gs_large, gs_large_y0,
        fwd ? kGsLarge.forward_iterations : kGsLarge.gradient_iterations);
  };
  cases("Forward", [](benchmark::State& s, const auto& p, Case c, const Vec& y0) {
    forward_benchmark(s, p, c, y0);
  });
  cases("Gradient", [](benchmark::State& s, const auto& p, Case c, const Vec& y0) {
    gradient_benchmark(s, p, c, y0, Stored::states);
  });
  cases("GradientStages", [](benchmark::State& s, const auto& p, Case c, const Vec& y0) {
    gradient_benchmark(s, p, c, y0, Stored::stages);
  });
  cases("GradientFirstCall", [](benchmark::State& s, const auto& p, Case c, const Vec& y0) {
    gradient_benchmark(s, p, c, y0, Stored::states_first_call);
  });

  // The pieces of one step for every case; the vector operations at ≈ 10^6 unknowns.
  const Index n6 = gs_large.state_size();
  auto piece = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMicrosecond)->MinTime(0.1);
  };
  auto pieces = [&piece](const Case& c, const auto& problem, const Vec& y0) {
    const std::string name = c.name;
    const double dt = c.dt;
    piece("Rhs/" + name, [&problem, &y0](benchmark::State& s) { rhs_benchmark(s, problem, y0); });
    piece("Vjp/" + name, [&problem, &y0](benchmark::State& s) { vjp_benchmark(s, problem, y0); });
    piece("Rk4Step/" + name,
          [&problem, &y0, dt](benchmark::State& s) { rk4_step_benchmark(s, problem, y0, dt); });
    piece("Rk4AdjointStep/" + name, [&problem, &y0, dt](benchmark::State& s) {
      rk4_adjoint_step_benchmark(s, problem, y0, dt);
    });
    piece("DriftFingerprint/" + name,
          [&problem, &y0](benchmark::State& s) { drift_fingerprint_benchmark(s, problem, y0); });
  };
  pieces(kL96Small, l96_small, l96_small_y0);
  pieces(kL96Large, l96_large, l96_large_y0);
  pieces(kGsSmall, gs_small, gs_small_y0);
  pieces(kGsLarge, gs_large, gs_large_y0);
  piece("AllFinite/1e6", [n6](benchmark::State& s) { all_finite_benchmark(s, n6); });
  piece("LinearCombination/1e6_1term",
        [n6](benchmark::State& s) { linear_combination_benchmark(s, n6, 1); });
  piece("LinearCombination/1e6_4terms",
        [n6](benchmark::State& s) { linear_combination_benchmark(s, n6, 4); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("rewind_method",
                              "rk4, fixed step, store-all, Eigen backend, 1 thread");
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
