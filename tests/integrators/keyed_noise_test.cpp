// Keyed normal draws: a pure function of (seed, step, stage, purpose, component) — the same bits
// every time, for any thread count and vector length, different bits for any other key — and
// standard normal in distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/keyed_noise.hpp"
#include "rewind/parallel.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;

Eigen::VectorXd draws(const NoiseKey& key, Index n, double scale = 1.0) {
  Eigen::VectorXd out = Eigen::VectorXd::Constant(n, -7.0);
  fill_keyed_normals<B>(key, scale, out);
  return out;
}

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// How many entries of a and b are equal (two independent normal vectors share none).
Index equal_entries(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  Index equal = 0;
  for (Index i = 0; i < a.size(); ++i) equal += a[i] == b[i];
  return equal;
}

class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(thread_count()) { set_thread_count(threads); }
  ~ThreadCount() { set_thread_count(saved_); }

 private:
  int saved_;
};

const NoiseKey kKey{.seed = 7, .step = 12, .stage = 0, .purpose = NoisePurpose::brownian_increment};

TEST(KeyedNoise, SameKeySameBits) {
  EXPECT_TRUE(same_bits(draws(kKey, 1001), draws(kKey, 1001)));
  EXPECT_TRUE(same_bits(draws(kKey, 1001, 0.1), 0.1 * draws(kKey, 1001)));
}

TEST(KeyedNoise, EveryPartOfTheKeyChangesTheDraws) {
  const Eigen::VectorXd base = draws(kKey, 1000);
  NoiseKey seed = kKey, step = kKey, stage = kKey;
  seed.seed = 8;
  step.step = 13;
  stage.stage = 1;
  EXPECT_EQ(equal_entries(base, draws(seed, 1000)), 0);
  EXPECT_EQ(equal_entries(base, draws(step, 1000)), 0);
  EXPECT_EQ(equal_entries(base, draws(stage, 1000)), 0);
  // The high words of seed and step are part of the key too.
  NoiseKey high_seed = kKey, high_step = kKey;
  high_seed.seed = kKey.seed | (std::uint64_t{1} << 40);
  high_step.step = kKey.step + (Index{1} << 35);
  EXPECT_EQ(equal_entries(base, draws(high_seed, 1000)), 0);
  EXPECT_EQ(equal_entries(base, draws(high_step, 1000)), 0);
}

TEST(KeyedNoise, EachComponentDependsOnlyOnItsKey) {
  // A short vector is the prefix of a long one, and keyed_normal gives any single entry.
  const Eigen::VectorXd longer = draws(kKey, 5000);
  const Eigen::VectorXd shorter = draws(kKey, 7);
  EXPECT_TRUE(same_bits(shorter, longer.head(7)));
  for (Index i : {Index{0}, Index{1}, Index{6}, Index{4999}})
    EXPECT_EQ(keyed_normal(kKey, i), longer[i]) << "component " << i;
}

TEST(KeyedNoise, DrawsDoNotDependOnTheThreadCount) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without threads";
  const Index n = 300'001;  // many blocks per thread, odd length
  Eigen::VectorXd one, many;
  {
    ThreadCount t(1);
    one = draws(kKey, n);
  }
  for (int threads : {2, 3, 4}) {
    ThreadCount t(threads);
    many = draws(kKey, n);
    EXPECT_TRUE(same_bits(one, many)) << threads << " threads";
  }
}

TEST(KeyedNoise, StandardNormalMoments) {
  const Index n = 1'000'000;
  const Eigen::VectorXd x = draws(kKey, n);
  const double mean = x.mean();
  const double var = (x.array() - mean).square().sum() / static_cast<double>(n - 1);
  const double m4 = x.array().pow(4).mean();
  // Standard errors for n draws: mean 1/√n, variance √(2/n), fourth moment √(96/n).
  EXPECT_LT(std::abs(mean), 5.0 / std::sqrt(double(n)));
  EXPECT_LT(std::abs(var - 1.0), 5.0 * std::sqrt(2.0 / double(n)));
  EXPECT_LT(std::abs(m4 - 3.0), 5.0 * std::sqrt(96.0 / double(n)));
  // Neighbouring components (one Box–Muller pair) are uncorrelated.
  double cross = 0.0;
  for (Index i = 0; i + 1 < n; i += 2) cross += x[i] * x[i + 1];
  EXPECT_LT(std::abs(cross / double(n / 2)), 5.0 / std::sqrt(double(n / 2)));
}

TEST(KeyedNoise, BadKeysAreRefused) {
  Eigen::VectorXd out(4);
  NoiseKey negative = kKey;
  negative.step = -1;
  EXPECT_NE(testing::error_message<InvalidArgument>([&] {
              fill_keyed_normals<B>(negative, 1.0, out);
            }).find("step = -1"),
            std::string::npos);
  NoiseKey stage = kKey;
  stage.stage = 70000;
  EXPECT_NE(testing::error_message<InvalidArgument>([&] {
              fill_keyed_normals<B>(stage, 1.0, out);
            }).find("stage = 70000"),
            std::string::npos);
}

}  // namespace
}  // namespace rwd
