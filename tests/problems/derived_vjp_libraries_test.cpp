// The vjps that Sacado (forward SFad, reverse Rad), Eigen's AutoDiffScalar and ADOL-C derive
// from the built-in problems written as templated models (bench/ad_choice/derived_vjps.hpp, the
// code bench/ad_choice/ad_choice_bench.cpp times) equal the problems' hand-written vjps to
// 1e-13 relative: Lorenz-63 as a dense model; Lorenz-96, Gray–Scott and Heat2D as stencil models.
// Built when the libraries are found (scripts/install_dependencies.sh installs them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ad_choice/derived_vjps.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;
using namespace ad_choice;

constexpr double kTolerance = 1e-13;

// max_i |a_i − b_i| / max_i |b_i|: the vector's relative error, as the 1e-13 means it.
double relative_error(const Vector& a, const Vector& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  return (a - b).cwiseAbs().maxCoeff() / (scale > 0.0 ? scale : 1.0);
}

// A derived vjp: (y, θ, v) → (out_y, out_θ), all raw arrays of the problem's sizes.
using DerivedVjp =
    std::function<void(const double*, const double*, const double*, double*, double*)>;

// Compares every derived vjp with the problem's own at a random state and cotangent.
template <class Problem>
void expect_equal_to_hand_written(const Problem& problem, const Vector& y, const Vector& theta,
                                  std::mt19937_64& rng,
                                  const std::vector<std::pair<std::string, DerivedVjp>>& derived) {
  const Index n = problem.state_size(), p = problem.parameter_size();
  const Vector v = testing::random_vector(n, rng);
  Vector hand_y(n), hand_theta(p);
  problem.vjp(0.0, y, theta, v, hand_y, hand_theta);
  for (const auto& [library, vjp] : derived) {
    Vector out_y = Vector::Constant(n, std::nan("")), out_theta = Vector::Constant(p, std::nan(""));
    vjp(y.data(), theta.data(), v.data(), out_y.data(), out_theta.data());
    EXPECT_LE(relative_error(out_y, hand_y), kTolerance) << library << ": (df/dy)^T v, n = " << n;
    EXPECT_LE(relative_error(out_theta, hand_theta), kTolerance)
        << library << ": (df/dtheta)^T v, n = " << n;
  }
}

// Every library's stencil vjp of `cell` on `grid`, and ADOL-C's tape of the whole rhs.
template <class Cell, class Grid, int K>
std::vector<std::pair<std::string, DerivedVjp>> stencil_vjps(const Cell& cell, const Grid& grid,
                                                             AdolcTape& tape) {
  return {
      {"Sacado SFad", [&](auto... a) { stencil_vjp<SacadoForward<K>>(cell, grid, a...); }},
      {"Eigen AutoDiffScalar", [&](auto... a) { stencil_vjp<EigenForward<K>>(cell, grid, a...); }},
      {"Sacado Rad", [&](auto... a) { stencil_vjp<SacadoReverse>(cell, grid, a...); }},
      {"ADOL-C", [&](auto... a) { tape.vjp(a...); }}};
}

TEST(DerivedVjpLibraries, Lorenz63AsADenseModel) {
  std::mt19937_64 rng(63);
  Lorenz63<> problem;
  const Vector theta = problem.default_parameters();
  const Vector y = testing::random_vector(3, rng, -20.0, 20.0);
  const Lorenz63Model model;
  AdolcTape tape(
      1, 3, 3, y.data(), theta.data(),
      [&](const adouble* ay, const adouble* ap, adouble* af) { model(ay, ap, nullptr, af); });
  expect_equal_to_hand_written(
      problem, y, theta, rng,
      {{"Sacado SFad", [&](auto... a) { dense_vjp<SacadoForward<6>>(model, a...); }},
       {"Eigen AutoDiffScalar", [&](auto... a) { dense_vjp<EigenForward<6>>(model, a...); }},
       {"Sacado Rad", [&](auto... a) { dense_vjp<SacadoReverse>(model, a...); }},
       {"ADOL-C", [&](auto... a) { tape.vjp(a...); }}});
}

TEST(DerivedVjpLibraries, Lorenz96AsAStencilModel) {
  std::mt19937_64 rng(96);
  for (Index n : {4, 5, 40, 1027}) {
    Lorenz96<> problem(n);
    const Vector theta = problem.default_parameters();
    const Vector y = testing::random_vector(n, rng, -10.0, 10.0);
    const Lorenz96Cell cell;
    const Lorenz96Ring grid{n};
    AdolcTape tape(2, n, 1, y.data(), theta.data(),
                   [&](const adouble* ay, const adouble* ap, adouble* af) {
                     stencil_rhs(cell, grid, ay, ap, af);
                   });
    expect_equal_to_hand_written(problem, y, theta, rng,
                                 stencil_vjps<Lorenz96Cell, Lorenz96Ring, 5>(cell, grid, tape));
  }
}

TEST(DerivedVjpLibraries, GrayScottAsAStencilModel) {
  std::mt19937_64 rng(42);
  for (Index n : {3, 8, 33}) {
    GrayScott<> problem(n);
    const Vector theta = problem.default_parameters();
    const Vector y = testing::random_vector(2 * n * n, rng, 0.0, 1.0);
    const GrayScottCell cell;
    const GrayScottGrid grid{n};
    AdolcTape tape(3, 2 * n * n, 4, y.data(), theta.data(),
                   [&](const adouble* ay, const adouble* ap, adouble* af) {
                     stencil_rhs(cell, grid, ay, ap, af);
                   });
    expect_equal_to_hand_written(problem, y, theta, rng,
                                 stencil_vjps<GrayScottCell, GrayScottGrid, 14>(cell, grid, tape));
  }
}

TEST(DerivedVjpLibraries, Heat2DAsAStencilModel) {
  std::mt19937_64 rng(2);
  for (Index n : {3, 8, 33}) {
    Heat2D<> problem(n);
    const Vector theta = problem.default_parameters();
    const Vector y = testing::random_vector(n * n, rng);
    const Heat2DCell cell;
    const Heat2DGrid grid{n, problem.source_profile()};
    AdolcTape tape(4, n * n, 2, y.data(), theta.data(),
                   [&](const adouble* ay, const adouble* ap, adouble* af) {
                     stencil_rhs(cell, grid, ay, ap, af);
                   });
    expect_equal_to_hand_written(problem, y, theta, rng,
                                 stencil_vjps<Heat2DCell, Heat2DGrid, 7>(cell, grid, tape));
  }
}

// Lorenz-96 with a sign flipped in one term: a wrong model.
struct WrongLorenz96Cell : Lorenz96Cell {
  template <class T>
  void operator()(const T* in, const T* p, const double*, T* f) const {
    f[0] = (in[3] + in[0]) * in[1] - in[2] + p[0];
  }
};

// The check has teeth: a cell with a wrong derivative (a sign flipped in one term) is caught.
TEST(DerivedVjpLibraries, AWrongModelIsCaught) {
  std::mt19937_64 rng(7);
  Lorenz96<> problem(40);
  const Vector theta = problem.default_parameters();
  const Vector y = testing::random_vector(40, rng, -10.0, 10.0);
  const Vector v = testing::random_vector(40, rng);
  Vector hand_y(40), hand_theta(1), out_y(40), out_theta(1);
  problem.vjp(0.0, y, theta, v, hand_y, hand_theta);
  stencil_vjp<SacadoForward<5>>(WrongLorenz96Cell{}, Lorenz96Ring{40}, y.data(), theta.data(),
                                v.data(), out_y.data(), out_theta.data());
  EXPECT_GT(relative_error(out_y, hand_y), 1e-3);
}

}  // namespace
}  // namespace rwd
