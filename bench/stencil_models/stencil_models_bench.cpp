// bench/stencil_models/stencil_models_bench.cpp — stencil models (rewind/stencil_model.hpp)
// against the built-in problems' hand-written vjps, side by side in one run.
//
//   cmake --build build --target stencil_models_bench
//   build/bench/stencil_models_bench [seconds_per_measurement]     # prints the table
//   bench/stencil_models/run_stencil_models.sh [BUILD_DIR]        # builds and runs it
//
// Cases: Lorenz-96 at N = 10^5, Gray–Scott at 2·71² ≈ 10^4 and 2·708² ≈ 10^6 unknowns, Heat2D at
// 317² ≈ 10^5, each as the built-in problem (hand-written vjp) and as the stencil model of
// tests/problems/models/stencil_models.hpp (derived vjp). For each: the time of one vjp and one
// rhs, hand-written and derived, and their ratio; and a store-all gradient of an RK4 run
// (rwd::differentiate with StoreAllStrategy) against a forward run of the same stepper
// (rwd::forward_loss), each problem's ratio gradient / forward and the derived gradient's time
// over the hand-written one's.
//
// Timing: thread CPU time (steadier than wall time on a shared machine), one thread
// (rwd::set_thread_count(1)); every figure is the median of 5 measurements, the hand-written and
// derived measurements interleaved (hand, derived, hand, …), each repeating the call for at least
// `seconds_per_measurement` (default 0.2 s).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/rewind.hpp"
#include "rewind/stencil_model.hpp"

namespace {

using B = rwd::EigenBackend;
using Vector = B::Vector;

double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Seconds per call of `call`, repeated for at least `min_seconds`.
double seconds_per_call(const std::function<void()>& call, double min_seconds) {
  call();  // warm-up
  long calls = 0;
  const double start = thread_seconds();
  double elapsed = 0.0;
  do {
    call();
    ++calls;
    elapsed = thread_seconds() - start;
  } while (elapsed < min_seconds);
  return elapsed / static_cast<double>(calls);
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

// Medians of 5 interleaved measurements of a and b (seconds per call).
std::pair<double, double> side_by_side(const std::function<void()>& a,
                                       const std::function<void()>& b, double min_seconds) {
  std::vector<double> ta, tb;
  for (int r = 0; r < 5; ++r) {
    ta.push_back(seconds_per_call(a, min_seconds));
    tb.push_back(seconds_per_call(b, min_seconds));
  }
  return {median(ta), median(tb)};
}

std::string shown(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.3g µs", seconds * 1e6);
  else
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  return text;
}

struct Row {
  std::string name;
  rwd::Index unknowns;
  double hand_vjp, derived_vjp, hand_rhs, derived_rhs;
  double hand_forward, hand_gradient, derived_forward, derived_gradient;
};

template <class Hand, class Derived>
Row measure(const std::string& name, const Hand& hand, const Derived& derived, const Vector& y0,
            const Vector& theta, rwd::Index steps, double dt, double min_seconds) {
  const rwd::Index n = hand.state_size(), p = hand.parameter_size();
  Vector v = Vector::Zero(n), out_y(n), out_theta(p), f(n);
  for (rwd::Index i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i));
  Row row{name, n, 0, 0, 0, 0, 0, 0, 0, 0};
  std::tie(row.hand_vjp, row.derived_vjp) =
      side_by_side([&] { hand.vjp(0.0, y0, theta, v, out_y, out_theta); },
                   [&] { derived.vjp(0.0, y0, theta, v, out_y, out_theta); }, min_seconds);
  std::tie(row.hand_rhs, row.derived_rhs) = side_by_side(
      [&] { hand.rhs(0.0, y0, theta, f); }, [&] { derived.rhs(0.0, y0, theta, f); }, min_seconds);
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  rwd::ExplicitRungeKutta hand_stepper(hand, rwd::ButcherTableau::rk4(),
                                       rwd::StepControl::fixed(0.0, dt, steps));
  rwd::ExplicitRungeKutta derived_stepper(derived, rwd::ButcherTableau::rk4(),
                                          rwd::StepControl::fixed(0.0, dt, steps));
  std::tie(row.hand_forward, row.derived_forward) =
      side_by_side([&] { rwd::forward_loss(hand_stepper, objective, y0, theta); },
                   [&] { rwd::forward_loss(derived_stepper, objective, y0, theta); }, min_seconds);
  std::tie(row.hand_gradient, row.derived_gradient) = side_by_side(
      [&] { rwd::differentiate(hand_stepper, objective, y0, theta, rwd::StoreAllStrategy{}); },
      [&] { rwd::differentiate(derived_stepper, objective, y0, theta, rwd::StoreAllStrategy{}); },
      min_seconds);
  std::fprintf(stderr, "measured %s\n", name.c_str());
  return row;
}

// The Rosenbrock adjoints' second derivatives jvp_vjp: the built-in Brusselator's hand-written
// ones against the stencil model's derived ones (nested forward mode, cell by cell), with the
// derived vjp beside them (the built-in interleaves its fields: the same work on other addresses).
void print_second_derivatives(rwd::Index side, double min_seconds) {
  const rwd::Brusselator2D hand(side);
  const auto derived = rwd::stencil_problem(rwd::testing::BrusselatorStencil{}, side, side);
  const rwd::Index n = hand.state_size();
  const Vector theta = hand.default_parameters();
  Vector y = hand.default_initial_state(), u(n), w(n), out_y(n), out_theta(3);
  for (rwd::Index i = 0; i < n; ++i) {
    u[i] = std::sin(0.37 * static_cast<double>(i));
    w[i] = std::cos(0.23 * static_cast<double>(i));
  }
  const auto [hand_second, derived_second] =
      side_by_side([&] { hand.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta); },
                   [&] { derived.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta); }, min_seconds);
  const auto [hand_vjp, derived_vjp] =
      side_by_side([&] { hand.vjp(0.0, y, theta, w, out_y, out_theta); },
                   [&] { derived.vjp(0.0, y, theta, w, out_y, out_theta); }, min_seconds);
  std::printf(
      "\n| Brusselator 2·%ld² | hand | derived | derived/hand |\n| --- | ---: | ---: | ---: |\n",
      static_cast<long>(side));
  std::printf("| jvp_vjp | %s | %s | %.2f× |\n", shown(hand_second).c_str(),
              shown(derived_second).c_str(), derived_second / hand_second);
  std::printf("| vjp | %s | %s | %.2f× |\n", shown(hand_vjp).c_str(), shown(derived_vjp).c_str(),
              derived_vjp / hand_vjp);
}

}  // namespace

int main(int argc, char** argv) {
  const double min_seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  rwd::set_thread_count(1);
  std::vector<Row> rows;
  {
    const rwd::Index n = 100000;
    const rwd::Lorenz96<> hand(n);
    const auto derived = rwd::stencil_problem(rwd::testing::Lorenz96Stencil{}, n);
    Vector y0 = hand.default_initial_state();
    for (rwd::Index i = 0; i < n; ++i) y0[i] += std::sin(0.1 * static_cast<double>(i));
    rows.push_back(
        measure("Lorenz-96", hand, derived, y0, hand.default_parameters(), 10, 0.01, min_seconds));
  }
  for (const rwd::Index side : {71, 708}) {
    const rwd::GrayScott<> hand(side);
    const auto derived = rwd::stencil_problem(rwd::testing::GrayScottStencil{}, side, side);
    rows.push_back(measure("Gray–Scott", hand, derived, hand.default_initial_state(1),
                           hand.default_parameters(), side < 100 ? 100 : 3, 1.0, min_seconds));
  }
  {
    const rwd::Index side = 317;
    const rwd::Heat2D<> hand(side);
    const auto derived = rwd::stencil_problem(rwd::testing::Heat2DStencil(side), side, side);
    rows.push_back(measure("Heat2D", hand, derived, hand.default_initial_state(),
                           hand.default_parameters(), 10, 1.0, min_seconds));
  }
  std::printf(
      "| case | unknowns | vjp hand | vjp derived | ratio | rhs hand | rhs derived | ratio | "
      "gradient/forward hand | gradient/forward derived | gradient derived/hand |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Row& r : rows)
    std::printf("| %s | %ld | %s | %s | %.2f× | %s | %s | %.2f× | %.2f | %.2f | %.2f× |\n",
                r.name.c_str(), static_cast<long>(r.unknowns), shown(r.hand_vjp).c_str(),
                shown(r.derived_vjp).c_str(), r.derived_vjp / r.hand_vjp, shown(r.hand_rhs).c_str(),
                shown(r.derived_rhs).c_str(), r.derived_rhs / r.hand_rhs,
                r.hand_gradient / r.hand_forward, r.derived_gradient / r.derived_forward,
                r.derived_gradient / r.hand_gradient);
  print_second_derivatives(128, min_seconds);
  return 0;
}
