// Contract 4, drift: a deterministic run reports exactly zero drift; a right-hand side that
// changes its last bit when a step is re-evaluated is caught, at the right step, under every
// policy (ignore records; warn records and warns, on stderr or through the program's warning
// handler; fail throws naming the step). Fingerprints do not depend on the backend that takes
// them, and one flipped bit anywhere is seen (drift_fingerprint_checks.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "drift_fingerprint_checks.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/warning.hpp"

namespace rwd {
namespace {

using B = EigenBackend;

// Lorenz-63 whose right-hand side, inside step `bad_step` (t in (t_bad, t_bad + dt)), returns a
// slightly different result every time it is evaluated again at a stage time it has seen
// before: the first forward sweep is clean, every replay of that step drifts. (A change of the
// very last bit of f is absorbed by rounding in y + h·Σ b_i k_i, so the perturbation is a
// relative 2^-40 ≈ 1e-12 — still far below anything a tolerance-based comparison would see.)
struct ReplayPerturbedLorenz {
  using Backend = B;
  using Vector = B::Vector;
  Lorenz63<> inner;
  double t_bad, dt;
  mutable std::vector<double> seen;
  Index state_size() const { return 3; }
  Index parameter_size() const { return 3; }
  void rhs(double t, const Vector& y, const Vector& th, Vector& f) const {
    inner.rhs(t, y, th, f);
    // Only the interior stage times of step `bad_step` (RK4: t_n + h/2): the end points are
    // shared with the neighbouring steps' stages.
    if (!(t > t_bad + 1e-12 && t < t_bad + dt - 1e-12)) return;
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) {
      f[0] += std::ldexp(std::abs(f[0]), -40);
    } else {
      seen.push_back(t);
    }
  }
  void vjp(double t, const Vector& y, const Vector& th, const Vector& v, Vector& oy,
           Vector& ot) const {
    inner.vjp(t, y, th, v, oy, ot);
  }
};

TEST(DriftMonitor, DeterministicRunHasExactlyZeroDrift) {
  Lorenz63<> problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 100));
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const auto r = driver.run(problem.default_initial_state(), problem.default_parameters(),
                            revolve_schedule(3));
  EXPECT_GT(r.summary.recomputed_steps, 99);  // more than the first sweep: replays happened
  EXPECT_GT(r.drift.replayed_steps_checked, 0);
  EXPECT_EQ(r.drift.max_rel_drift, 0.0);
  EXPECT_EQ(r.drift.first_drift_step, -1);
  EXPECT_TRUE(r.drift.bitwise_identical());
}

CheckpointedResult<B::Vector> run_perturbed(DriftPolicy policy, Index bad_step) {
  const double dt = 0.01;
  ReplayPerturbedLorenz problem{Lorenz63<>(), static_cast<double>(bad_step) * dt, dt, {}};
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, dt, 60));
  CheckpointOptions options;
  options.drift_policy = policy;
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
  Lorenz63<> plain;
  // c = 2: everything after y_0 and one more snapshot is replayed, so step 20 is re-run.
  return driver.run(plain.default_initial_state(), plain.default_parameters(), revolve_schedule(2));
}

TEST(DriftMonitor, NamesTheFirstDriftingStep) {
  // The perturbation sits in step 20 (y_20 → y_21): the first replayed state that differs is y_21.
  const auto r = run_perturbed(DriftPolicy::ignore, 20);
  EXPECT_EQ(r.drift.first_drift_step, 21);
  EXPECT_GT(r.drift.max_rel_drift, 0.0);
  EXPECT_LT(r.drift.max_rel_drift, 1e-9);  // tiny, and sized rather than just flagged
  EXPECT_GT(r.drift.mismatched_steps, 0);
}

TEST(DriftMonitor, WarnPolicyRecordsAndPrints) {
  ::testing::internal::CaptureStderr();
  const auto r = run_perturbed(DriftPolicy::warn, 33);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.drift.first_drift_step, 34);
  EXPECT_NE(err.find("differs from the first forward sweep"), std::string::npos) << err;
}

TEST(DriftMonitor, WarnPolicyReachesTheUserHandlerNotStderr) {
  std::vector<Warning> seen;
  ScopedWarningHandler capture([&](const Warning& w) { seen.push_back(w); });
  ::testing::internal::CaptureStderr();
  const auto r = run_perturbed(DriftPolicy::warn, 33);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");
  EXPECT_EQ(r.drift.first_drift_step, 34);
  ASSERT_EQ(seen.size(), 1u);  // once per run, at the first drift
  EXPECT_EQ(seen[0].source, "drift monitor");
  EXPECT_EQ(seen[0].message.rfind("replayed state at step 34 (t = 0.34) differs from the first "
                                  "forward sweep (relative drift ",
                                  0),
            0u)
      << seen[0].message;
  EXPECT_EQ(seen[0].message.find('\n'), std::string::npos);
}

TEST(DriftMonitor, FailPolicyThrowsNamingTheStep) {
  try {
    run_perturbed(DriftPolicy::fail, 20);
    FAIL() << "expected a DriftError";
  } catch (const DriftError& e) {
    EXPECT_NE(std::string(e.what()).find("step 21"), std::string::npos) << e.what();
  }
}

TEST(DriftMonitor, OneFlippedBitIsSeenAndTheHostFingerprintIsTheHosts) {
  drift_checks::expect_fingerprints_match_the_host<EigenBackend>(300001);
}
TEST(DriftMonitor, FingerprintsOnTheThrustBackendAreTheHosts) {
  drift_checks::expect_fingerprints_match_the_host<ThrustBackend>(300001);
}

// The host backends fingerprint through a vectorised loop (fingerprint_range over
// sum_index_ranges' pieces); every sum must be the bits of FingerprintKernel through sum_index,
// which the device backends run: around the chunk (256), sum_index's direct limit (65536) and its
// blocks (1024), and for values a state can hold (±0, subnormals, ±Inf, NaN).
TEST(DriftMonitor, HostFingerprintIsTheKernelsThroughSumIndexBitForBit) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  const double specials[] = {0.0,
                             -0.0,
                             5e-324,
                             -2.2e-308,
                             1e308,
                             -1e-300,
                             std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()};
  for (const Index n : {Index{1}, Index{3}, Index{255}, Index{256}, Index{257}, Index{10082},
                        Index{65536}, Index{65537}, Index{300001}}) {
    std::vector<double> y(static_cast<std::size_t>(n));
    for (double& v : y) v = value(rng);
    for (std::size_t k = 0; k < std::size(specials) && k < y.size(); ++k)
      y[(k * 7919) % y.size()] = specials[k];
    for (const std::uint64_t seed : {std::uint64_t{0x5EEDF00D}, std::uint64_t{42}}) {
      const Sums<8> want = B::sum_index<8>(n, detail::FingerprintKernel{y.data(), seed});
      const Sums<8> got = B::sum_index_ranges<8>(n, [&](Index begin, Index end) {
        return detail::fingerprint_range(y.data(), seed, begin, end);
      });
      for (int j = 0; j < 8; ++j) {
        if (std::isnan(got.v[j]) && std::isnan(want.v[j])) continue;  // a NaN's payload: either
        EXPECT_EQ(double_bits(got.v[j]), double_bits(want.v[j]))
            << "sum " << j << ", n = " << n << ", seed " << seed;
      }
    }
  }
}

TEST(DriftMonitor, FingerprintsOfAnotherSchemeAreRefused) {
  DriftMonitor<B> monitor(/*steps=*/4, 3, DriftPolicy::ignore, 8);
  B::Vector y = B::zeros(3);
  monitor.record(0, y);
  std::vector<std::byte> saved;
  monitor.save(saved, 0);
  DriftMonitor<B> again(4, 3, DriftPolicy::ignore, 8);
  EXPECT_TRUE(again.load(saved));
  // A fingerprint of the scheme before this one (no tag after the report): refused.
  std::vector<std::byte> untagged(saved);
  untagged.erase(untagged.begin() + sizeof(DriftReport),
                 untagged.begin() + sizeof(DriftReport) + sizeof(std::uint64_t));
  EXPECT_FALSE(again.load(untagged));
}

}  // namespace
}  // namespace rwd
