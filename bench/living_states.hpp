// bench/living_states.hpp — the states the gradient benchmarks start from: developed dynamics,
// not the problems' textbook starting points.
//
//   const rwd::GrayScott<> gs(708);
//   const Vec y0 = bench::living_state(gs);        // a grown labyrinth on the whole grid
//   const bench::Liveness l = bench::liveness(gs, y0);   // std(v) ≈ 0.11, ≈ 80 % of cells active
//
// Why: the kernels have no data-dependent branches, so a step costs the same on any field, but a
// benchmark should still run the physics a user runs. The problems' default initial states are
// not that at the sizes benchmarked:
// - Gray–Scott's seed square covers 4 % of the grid, and the pattern fills an n = 71 grid only
//   after about 2000 steps (v > 0.05 on 4 % of the cells at step 0, 46 % at 1000, 77–80 % from
//   2000 on); at n = 708 the 20 steps timed would run on a grid that is 96 % the homogeneous
//   u = 1, v = 0;
// - Lorenz-96's one perturbed site (y_0 = F + 0.01) leaves all but a few dozen of 10^5 sites at
//   the fixed point y_i = F over the 100 steps (t = 1) timed.
// So Gray–Scott starts from a pattern grown for kGrayScottGrowthSteps on a tile of the grid (the
// grid itself when n ≤ 128, otherwise its largest divisor in [32, 128], repeated: a periodic
// tile's pattern is a solution on the whole periodic grid, and growing it costs under a second
// instead of half a minute at n = 708), and Lorenz-96 from every site perturbed and run for t = 10
// (about 17 e-foldings of its leading Lyapunov exponent, 1.7 at F = 8), after which every site is
// chaotic.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace bench {

using LivingVector = rwd::EigenBackend::Vector;

// Steps (dt = 1, RK4, default parameters) a Gray–Scott tile grows its pattern before a benchmark
// starts. The share of active cells stops growing after about 2000 steps at n = 59 and 71 (0.79
// at n = 71) and 3500 at n = 118 (0.80), the tile of n = 708.
inline constexpr rwd::Index kGrayScottGrowthSteps = 5000;
// Lorenz-96 spin-up: t = kLorenz96SpinUpSteps · kLorenz96SpinUpDt = 10.
inline constexpr rwd::Index kLorenz96SpinUpSteps = 1000;
inline constexpr double kLorenz96SpinUpDt = 0.01;

// How alive a state is: the spread of its field and the share of sites away from the homogeneous
// state. Gray–Scott: std(v) and the share of cells with v > 0.05 (the background is v = 0);
// Lorenz-96: std(y) and the share of sites with |y_i − F| > 0.1 (the fixed point is y_i = F).
struct Liveness {
  double spread = 0.0;
  double active = 0.0;
};

// The side of the square tile a Gray–Scott grid of side n is grown from (see above).
inline rwd::Index gray_scott_tile(rwd::Index n) {
  if (n <= 128) return n;
  for (rwd::Index d = 128; d >= 32; --d)
    if (n % d == 0) return d;
  throw std::invalid_argument("living_state: a Gray-Scott grid of side " + std::to_string(n) +
                              " > 128 needs a divisor in [32, 128] to be tiled from");
}

template <class P>
LivingVector run_rk4(const P& problem, LivingVector y, const LivingVector& theta, double dt,
                     rwd::Index steps) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, steps));
  rwd::Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return y;
}

// A grown Gray–Scott pattern on the whole grid of `gs`, for its default parameters.
inline LivingVector living_state(const rwd::GrayScott<>& gs) {
  const rwd::Index n = gs.grid_size();
  const rwd::Index d = gray_scott_tile(n);
  const rwd::GrayScott<> tile(d);
  const LivingVector grown = run_rk4(tile, tile.default_initial_state(), tile.default_parameters(),
                                     1.0, kGrayScottGrowthSteps);
  LivingVector y(gs.state_size());
  for (rwd::Index field = 0; field < 2; ++field)
    for (rwd::Index r = 0; r < n; ++r)
      for (rwd::Index c = 0; c < n; ++c)
        y[field * n * n + r * n + c] = grown[field * d * d + (r % d) * d + (c % d)];
  return y;
}

// A Lorenz-96 state chaotic at every site, for the default forcing: y_i = F + 0.01 ξ_i (ξ_i in
// [−1, 1) from the problems' own hash of (1, i), rwd::detail::hash_uniform), run for t = 10.
inline LivingVector living_state(const rwd::Lorenz96<>& l96) {
  const LivingVector theta = l96.default_parameters();
  LivingVector y(l96.state_size());
  for (rwd::Index i = 0; i < l96.state_size(); ++i)
    y[i] = theta[0] + 0.01 * rwd::detail::hash_uniform(1, static_cast<std::uint64_t>(i));
  return run_rk4(l96, y, theta, kLorenz96SpinUpDt, kLorenz96SpinUpSteps);
}

inline Liveness liveness(const rwd::GrayScott<>& gs, const LivingVector& y) {
  const auto v = y.tail(gs.cell_count()).array();
  const double mean = v.mean();
  return {std::sqrt((v - mean).square().mean()),
          static_cast<double>((v > 0.05).count()) / static_cast<double>(gs.cell_count())};
}

inline Liveness liveness(const rwd::Lorenz96<>& l96, const LivingVector& y) {
  const double forcing = l96.default_parameters()[0];
  const auto a = y.array();
  const double mean = a.mean();
  return {std::sqrt((a - mean).square().mean()),
          static_cast<double>(((a - forcing).abs() > 0.1).count()) /
              static_cast<double>(l96.state_size())};
}

}  // namespace bench
