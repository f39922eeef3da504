// Gradients of SDE runs (rwd::StochasticStepper): pathwise gradients equal central finite
// differences of the whole run with common random numbers; every schedule — revolve at several
// budgets, in memory and on disk — gives store-all's bits with zero drift, because every replay
// regenerates its draws from the key in the carry; the mean of pathwise gradients over seeds
// matches the exact d E[J]/dθ of the discrete Euler–Maruyama map of Ornstein–Uhlenbeck; and a
// replay with a wrong key is caught by the drift monitor, naming the step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/gradient_check.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = Eigen::VectorXd;

constexpr SdeScheme kSchemes[] = {SdeScheme::euler_maruyama, SdeScheme::milstein};

// ½|y_N|² plus observations at steps 5 and 17: the adjoint gets jumps mid-run too.
Objective<B> objective() {
  return Objective<B>(
      [](double, const Vec& y, Vec& g) {
        g = y;
        return 0.5 * y.squaredNorm();
      },
      {5, 17},
      [](Index, double, const Vec& y, Vec& g) {
        g = 0.5 * y;
        return 0.25 * y.squaredNorm();
      });
}

template <class P>
void check_against_finite_differences(const P& problem, const Vec& y0, double dt, Index steps,
                                      double tolerance) {
  const Vec theta = problem.default_parameters();
  for (SdeScheme s : kSchemes) {
    for (std::uint64_t seed : {3u, 4u}) {
      SCOPED_TRACE(std::string(scheme_name(s)) + ", seed " + std::to_string(seed));
      StochasticStepper stepper(problem, s, StepControl::fixed(0.0, dt, steps), seed);
      StoreAllAdjoint driver(stepper, objective());
      const auto r = driver.run(y0, theta);
      for (int which = 0; which < 2; ++which) {
        const auto check =
            testing::directional_fd(stepper, objective(), y0, theta,
                                    which == 0 ? r.grad_y0 : r.grad_theta, which, 100 + seed, 1e-6);
        EXPECT_LT(check.rel_error(), tolerance)
            << (which == 0 ? "dJ/dy0 " : "dJ/dtheta ") << check.adjoint << " vs fd " << check.fd;
      }
    }
  }
}

TEST(StochasticAdjoint, PathwiseGradientsMatchFiniteDifferencesWithCommonRandomNumbers) {
  OrnsteinUhlenbeck<> ou(3);
  Vec y0(3);
  y0 << 0.2, -0.5, 1.5;
  check_against_finite_differences(ou, y0, 0.01, 60, 1e-7);
  StochasticLorenz63<> lorenz;
  check_against_finite_differences(lorenz, lorenz.default_initial_state(), 0.002, 200, 1e-6);
}

TEST(StochasticAdjoint, EveryScheduleGivesStoreAllBitsWithZeroDrift) {
  StochasticLorenz63<> lorenz;
  const Vec y0 = lorenz.default_initial_state(), theta = lorenz.default_parameters();
  test::ScratchDirectory scratch;
  for (SdeScheme s : kSchemes) {
    StochasticStepper stepper(lorenz, s, StepControl::fixed(0.0, 0.002, 150), 2024);
    StoreAllAdjoint reference_driver(stepper, objective());
    const auto reference = reference_driver.run(y0, theta);
    const std::vector<std::pair<std::string, Planner>> schedules = {
        {"revolve c=1", revolve_schedule(1)},
        {"revolve c=2", revolve_schedule(2)},
        {"revolve c=5", revolve_schedule(5)},
        {"revolve c=17", revolve_schedule(17)},
        {"revolve c=3 on disk", on_disk(revolve_schedule(3))},
        {"revolve c=9 on disk, inline I/O", on_disk(revolve_schedule(9))}};
    for (const auto& [name, planner] : schedules) {
      SCOPED_TRACE(std::string(scheme_name(s)) + ", " + name);
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      options.disk.directory = scratch.path();
      options.disk.asynchronous = name.find("inline") == std::string::npos;
      CheckpointedAdjoint driver(stepper, objective(), options);
      const auto r = driver.run(y0, theta, planner);
      EXPECT_EQ(std::memcmp(&r.loss, &reference.loss, sizeof(double)), 0);
      EXPECT_TRUE(testing::same_bits(r.grad_y0, reference.grad_y0));
      EXPECT_TRUE(testing::same_bits(r.grad_theta, reference.grad_theta));
      EXPECT_TRUE(testing::same_bits(r.y_final, reference.y_final));
      EXPECT_TRUE(r.drift.bitwise_identical());
      EXPECT_EQ(r.drift.max_rel_drift, 0.0);
      EXPECT_GT(r.drift.replayed_steps_checked, 0);
      if (name.find("disk") != std::string::npos) {
        EXPECT_GT(r.summary.storage.stores_on(LevelKind::disk), 0);
      }
    }
  }
}

// Mean and standard error of the mean of per-path values.
struct SampleMean {
  double mean = 0.0, standard_error = 0.0;
};
SampleMean sample_mean(const std::vector<double>& x) {
  const double m = static_cast<double>(x.size());
  double sum = 0.0;
  for (double v : x) sum += v;
  const double mean = sum / m;
  double ss = 0.0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / (m - 1) / m)};
}

// Euler–Maruyama for OU is linear: y_N = a^N y0 + μ(1 − a^N) + σ Σ_k a^{N−1−k} ΔW_k with
// a = 1 − κh, so E[y_N] = μ + (y0 − μ) a^N and E[y_N²] = E[y_N]² + σ² h Σ_{k<N} a^{2k}
// exactly, for the discrete map. Their θ-derivatives against the mean of pathwise gradients over
// M seeds × C independent components (C paths per run: J sums over them, so each run's gradient
// over C is the mean of C pathwise gradients), within 4 standard errors of the mean over runs.
TEST(StochasticAdjoint, MeanPathwiseGradientIsTheExactDerivativeOfTheMeanForOrnsteinUhlenbeck) {
  const Index C = 2000;
  OrnsteinUhlenbeck<> ou(C);
  const double kappa = 2.0, mu = 1.0, sigma = 0.5, y0v = 0.0, h = 0.02;
  const Index N = 40;
  const int M = 100;
  const Vec theta = ou.default_parameters(kappa, mu, sigma);
  const Vec y0 = ou.default_initial_state(y0v);
  const double a = 1.0 - kappa * h;
  const double aN = std::pow(a, double(N));
  const double m = mu + (y0v - mu) * aN;
  const double dm_dkappa = (y0v - mu) * double(N) * std::pow(a, double(N - 1)) * (-h);
  const double dm_dmu = 1.0 - aN;
  double S = 0.0, dS_dkappa = 0.0;
  for (Index k = 0; k < N; ++k) {
    S += std::pow(a, 2.0 * double(k));
    if (k > 0) dS_dkappa += 2.0 * double(k) * std::pow(a, 2.0 * double(k) - 1.0) * (-h);
  }
  // Per path, J1 = y_N and J2 = ½ y_N² (terminal_squared_norm), so d E[J2] = ½ d E[y_N²].
  const double exact_linear[3] = {dm_dkappa, dm_dmu, 0.0};
  const double exact_square[3] = {m * dm_dkappa + 0.5 * sigma * sigma * h * dS_dkappa, m * dm_dmu,
                                  sigma * h * S};
  const auto linear = Objective<B>::terminal_linear(Vec::Ones(C));
  const auto square = Objective<B>::terminal_squared_norm();
  std::vector<double> g1[3], g2[3];
  for (int path = 0; path < M; ++path) {
    StochasticStepper stepper(ou, SdeScheme::euler_maruyama, StepControl::fixed(0.0, h, N),
                              static_cast<std::uint64_t>(path) + 1000);
    const auto r1 = StoreAllAdjoint(stepper, linear).run(y0, theta);
    const auto r2 = StoreAllAdjoint(stepper, square).run(y0, theta);
    for (int j = 0; j < 3; ++j) {
      g1[j].push_back(r1.grad_theta[j] / double(C));
      g2[j].push_back(r2.grad_theta[j] / double(C));
    }
  }
  const char* names[3] = {"kappa", "mu", "sigma"};
  for (int j = 0; j < 3; ++j) {
    const SampleMean s1 = sample_mean(g1[j]), s2 = sample_mean(g2[j]);
    EXPECT_NEAR(s1.mean, exact_linear[j], 4.0 * s1.standard_error + 1e-12)
        << "d E[y_N]/d" << names[j] << ", standard error " << s1.standard_error;
    EXPECT_NEAR(s2.mean, exact_square[j], 4.0 * s2.standard_error + 1e-12)
        << "d E[y_N²/2]/d" << names[j] << ", standard error " << s2.standard_error;
    // The test has teeth: the standard errors are small against the derivatives it checks.
    EXPECT_LT(s2.standard_error, 0.01 * std::abs(exact_square[j])) << names[j];
  }
}

// A stepper that replays with the wrong key: the first time any step is taken again (a replay
// from a snapshot), it flips a bit of the carry's noise seed — as a corrupted stored carry would.
template <class Inner>
class WrongKeyOnReplay {
 public:
  using Backend = typename Inner::Backend;
  using Vector = typename Backend::Vector;
  explicit WrongKeyOnReplay(Inner& inner) : inner_(inner), seen_(inner.planned_steps() + 1, 0) {}
  Index state_size() const { return inner_.state_size(); }
  Index parameter_size() const { return inner_.parameter_size(); }
  Index planned_steps() const { return inner_.planned_steps(); }
  const StepperCounters& counters() const { return inner_.counters(); }
  void reset_counters() { inner_.reset_counters(); }
  std::string describe() const { return inner_.describe(); }
  Carry initial_carry(const Vector& y, const Vector& theta) {
    return inner_.initial_carry(y, theta);
  }
  bool finished(const Carry& c) const { return inner_.finished(c); }
  void step(Vector& y, Carry& carry, const Vector& theta) {
    auto& seen = seen_[static_cast<std::size_t>(carry.step)];
    if (seen && first_replayed_ < 0) {
      first_replayed_ = carry.step;
      carry.noise_seed ^= 1;
    }
    seen = 1;
    inner_.step(y, carry, theta);
  }
  void adjoint_step(const Vector& y, const Carry& c, const Vector& theta, Vector& l, Vector& m) {
    inner_.adjoint_step(y, c, theta, l, m);
  }
  Index first_replayed() const { return first_replayed_; }

 private:
  Inner& inner_;
  std::vector<char> seen_;
  Index first_replayed_ = -1;
};

TEST(StochasticAdjoint, AReplayWithAWrongKeyIsCaughtNamingTheStep) {
  StochasticLorenz63<> lorenz;
  const Vec y0 = lorenz.default_initial_state(), theta = lorenz.default_parameters();
  for (SdeScheme s : kSchemes) {
    StochasticStepper inner(lorenz, s, StepControl::fixed(0.0, 0.002, 120), 5);
    WrongKeyOnReplay wrong(inner);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(wrong, objective(), options);
    const std::string message =
        testing::error_message<DriftError>([&] { driver.run(y0, theta, revolve_schedule(4)); });
    ASSERT_GE(wrong.first_replayed(), 0);
    const std::string step = "replayed state at step " + std::to_string(wrong.first_replayed() + 1);
    EXPECT_NE(message.find(step), std::string::npos) << message << " (expected " << step << ")";
  }
}

}  // namespace
}  // namespace rwd
