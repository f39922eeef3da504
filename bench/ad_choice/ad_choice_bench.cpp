// bench/ad_choice/ad_choice_bench.cpp — derived vjps against the hand-written ones, side by side:
// which automatic-differentiation library rewind derives its vjps with (issue 42, item 3).
//
//   cmake --build build --target ad_choice_bench
//   bench/ad_choice/run_ad_choice.sh build      # runs it, prints the table of ad_choice.md
//
// One benchmark per (case, library), all in one run, one thread (rwd::set_thread_count(1): the
// derived stencil vjps scatter into shared entries and run on one thread, so the hand-written
// vjps do too). Each times one vjp, (∂f/∂y)ᵀv and (∂f/∂θ)ᵀv together, at a random state and
// cotangent. Cases: Lorenz-63 (3 states, a dense model); Lorenz-96 at N = 10^5, Gray–Scott at
// 2·71² ≈ 10^4 and 2·708² ≈ 10^6 unknowns and Heat2D at 317² ≈ 10^5 unknowns (stencil models:
// one cell's update from its neighbourhood). Libraries (bench/ad_choice/derived_vjps.hpp):
//
//   Hand         the problem's own vjp (src/problems)
//   SacadoSFad   Sacado forward mode, SFad<double, K>, K = inputs + parameters of one evaluation
//   EigenAD      Eigen's AutoDiffScalar<Matrix<double, K, 1>>, the same scheme
//   SacadoRad    Sacado reverse mode (Rad), recorded and swept at every evaluation
//   AdolcTape    ADOL-C: the whole rhs taped once; each vjp is zos_forward + fos_reverse
//   AutoProblem  Lorenz-63 only: rwd::auto_problem's vjp (rewind/model.hpp), SFad as shipped
//
// Counter `n`: the state size. tests/problems/derived_vjp_libraries_test.cpp checks that every
// derived vjp timed here equals the hand-written one to 1e-13.
#include <benchmark/benchmark.h>

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ad_choice/derived_vjps.hpp"
#include "rewind/model.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace {

using rwd::Index;
using Vector = rwd::EigenBackend::Vector;
using namespace rwd::ad_choice;

Vector random_vector(Index n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Vector x(n);
  for (Index i = 0; i < n; ++i) x[i] = dist(rng);
  return x;
}

// A state, parameters, cotangent and outputs of one case.
struct Point {
  Vector y, theta, v, out_y, out_theta;
  Point(Index n, Vector parameters, double lo, double hi)
      : y(random_vector(n, 1, lo, hi)),
        theta(std::move(parameters)),
        v(random_vector(n, 2, -1.0, 1.0)),
        out_y(n),
        out_theta(theta.size()) {}
};

// Times `vjp(point)` and reports the state size.
template <class Vjp>
void time_vjp(benchmark::State& state, Point& point, Vjp vjp) {
  rwd::set_thread_count(1);
  for (auto _ : state) {
    vjp(point);
    benchmark::DoNotOptimize(point.out_y.data());
    benchmark::DoNotOptimize(point.out_theta.data());
    benchmark::ClobberMemory();
  }
  state.counters["n"] = static_cast<double>(point.y.size());
}

// A stencil case: the problem, its cell and grid, and the libraries' vjps of it.
template <class Problem, class Cell, class Grid, int K>
void register_stencil_case(const std::string& name, std::shared_ptr<Problem> problem, Grid grid,
                           double lo, double hi, short tag) {
  auto point =
      std::make_shared<Point>(problem->state_size(), problem->default_parameters(), lo, hi);
  auto shared_grid = std::make_shared<Grid>(std::move(grid));
  const Cell cell;
  benchmark::RegisterBenchmark(("Hand/" + name).c_str(), [=](benchmark::State& s) {
    time_vjp(s, *point,
             [&](Point& q) { problem->vjp(0.0, q.y, q.theta, q.v, q.out_y, q.out_theta); });
  });
  auto stencil = [=]<class Library>(const char* library) {
    benchmark::RegisterBenchmark(
        (std::string(library) + "/" + name).c_str(), [=](benchmark::State& s) {
          time_vjp(s, *point, [&](Point& q) {
            stencil_vjp<Library>(cell, *shared_grid, q.y.data(), q.theta.data(), q.v.data(),
                                 q.out_y.data(), q.out_theta.data());
          });
        });
  };
  stencil.template operator()<SacadoForward<K>>("SacadoSFad");
  stencil.template operator()<EigenForward<K>>("EigenAD");
  stencil.template operator()<SacadoReverse>("SacadoRad");
  benchmark::RegisterBenchmark(("AdolcTape/" + name).c_str(), [=](benchmark::State& s) {
    // Taped once per benchmark, before timing (ADOL-C keeps the tape between vjps).
    AdolcTape tape(tag, point->y.size(), point->theta.size(), point->y.data(), point->theta.data(),
                   [&](const adouble* y, const adouble* p, adouble* f) {
                     stencil_rhs(cell, *shared_grid, y, p, f);
                   });
    time_vjp(s, *point, [&](Point& q) {
      tape.vjp(q.y.data(), q.theta.data(), q.v.data(), q.out_y.data(), q.out_theta.data());
    });
  });
}

// Lorenz-63 as a user of rewind/model.hpp writes it: rwd::auto_problem's vjp is the product's
// path (SFad, with the size checks every problem makes).
struct TemplatedLorenz63 {
  static constexpr std::array<const char*, 3> state_names{"x", "y", "z"};
  static constexpr std::array<const char*, 3> parameter_names{"sigma", "rho", "beta"};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    Lorenz63Model{}(y, p, nullptr, f);
  }
};

void register_lorenz63() {
  auto problem = std::make_shared<rwd::Lorenz63<>>();
  auto point = std::make_shared<Point>(3, problem->default_parameters(), -20.0, 20.0);
  const Lorenz63Model model;
  benchmark::RegisterBenchmark("Hand/Lorenz63", [=](benchmark::State& s) {
    time_vjp(s, *point,
             [&](Point& q) { problem->vjp(0.0, q.y, q.theta, q.v, q.out_y, q.out_theta); });
  });
  auto dense = [=]<class Library>(const char* library) {
    benchmark::RegisterBenchmark(
        (std::string(library) + "/Lorenz63").c_str(), [=](benchmark::State& s) {
          time_vjp(s, *point, [&](Point& q) {
            dense_vjp<Library>(model, q.y.data(), q.theta.data(), q.v.data(), q.out_y.data(),
                               q.out_theta.data());
          });
        });
  };
  dense.template operator()<SacadoForward<6>>("SacadoSFad");
  dense.template operator()<EigenForward<6>>("EigenAD");
  dense.template operator()<SacadoReverse>("SacadoRad");
  auto derived = std::make_shared<rwd::AutoProblem<TemplatedLorenz63>>();
  benchmark::RegisterBenchmark("AutoProblem/Lorenz63", [=](benchmark::State& s) {
    time_vjp(s, *point,
             [&](Point& q) { derived->vjp(0.0, q.y, q.theta, q.v, q.out_y, q.out_theta); });
  });
  benchmark::RegisterBenchmark("AdolcTape/Lorenz63", [=](benchmark::State& s) {
    AdolcTape tape(
        11, 3, 3, point->y.data(), point->theta.data(),
        [&](const adouble* y, const adouble* p, adouble* f) { model(y, p, nullptr, f); });
    time_vjp(s, *point, [&](Point& q) {
      tape.vjp(q.y.data(), q.theta.data(), q.v.data(), q.out_y.data(), q.out_theta.data());
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  register_lorenz63();
  register_stencil_case<rwd::Lorenz96<>, Lorenz96Cell, Lorenz96Ring, 5>(
      "Lorenz96/1e5", std::make_shared<rwd::Lorenz96<>>(100000), Lorenz96Ring{100000}, -10.0, 10.0,
      12);
  register_stencil_case<rwd::GrayScott<>, GrayScottCell, GrayScottGrid, 14>(
      "GrayScott/1e4", std::make_shared<rwd::GrayScott<>>(71), GrayScottGrid{71}, 0.0, 1.0, 13);
  register_stencil_case<rwd::GrayScott<>, GrayScottCell, GrayScottGrid, 14>(
      "GrayScott/1e6", std::make_shared<rwd::GrayScott<>>(708), GrayScottGrid{708}, 0.0, 1.0, 14);
  auto heat = std::make_shared<rwd::Heat2D<>>(317);
  register_stencil_case<rwd::Heat2D<>, Heat2DCell, Heat2DGrid, 7>(
      "Heat2D/1e5", heat, Heat2DGrid{317, heat->source_profile()}, -1.0, 1.0, 15);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
