// Threads inside a process (rewind/parallel.hpp): the thread count is a setting with clear
// errors, loops really run on several threads, and every Eigen-backend operation gives the same
// bits for 1, 2, 3 and 4 threads, at sizes on both sides of every piece and threshold of the fixed
// decomposition.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/parallel.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(thread_count()) {}
  ~ThreadCountGuard() { set_thread_count(saved_); }

 private:
  int saved_;
};

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

V random_vector(Index n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  return testing::random_vector(n, rng, lo, hi);
}

// Every result an Eigen-backend computation can depend on, for one thread count.
std::vector<double> all_results(Index n) {
  using B = EigenBackend;
  const V x = random_vector(n, 1), w = random_vector(n, 2, 0.5, 2.0), z = random_vector(n, 3);
  std::vector<double> r = {B::dot(x, w), B::max_norm(x), B::wrms_norm(x, w),
                           B::error_norm(x, w, z, 1e-3, 1e-6), B::all_finite(x) ? 1.0 : 0.0};
  V out = B::zeros(n), y = z;
  const double c[] = {0.5, -0.25, 2.0};
  const V* v[] = {&x, &w, &z};
  B::linear_combination(out, 1.5, y, c, v);
  B::axpy(0.75, x, y);
  B::scale(1.0 / 3.0, y);
  const double* xs = x.data();
  const Sums<2> s = B::sum_index<2>(n, [xs](Index i) {
    return Sums<2>{{xs[i] * xs[i], xs[i] / 3.0}};
  });
  r.push_back(s.v[0]);
  r.push_back(s.v[1]);
  r.insert(r.end(), out.data(), out.data() + n);
  r.insert(r.end(), y.data(), y.data() + n);
  return r;
}

TEST(Threads, TheCountIsASettingWithClearErrors) {
  ThreadCountGuard guard;
  EXPECT_GE(thread_count(), 1);
  EXPECT_GE(available_cores(), 1);
  EXPECT_THROW(set_thread_count(0), InvalidArgument);
  EXPECT_THROW(set_thread_count(-3), InvalidArgument);
  set_thread_count(1);
  EXPECT_EQ(thread_count(), 1);
  if (kThreadsAvailable) {
    set_thread_count(3);
    EXPECT_EQ(thread_count(), 3);
  } else {
    EXPECT_THROW(set_thread_count(2), InvalidArgument);
  }
}

// A kernel over grid rows: each call does `row_length` elements' work.
struct RowVisit {
  Index row_length;
  std::function<void(Index)> visit;
  Index elements_per_index() const { return row_length; }
  void operator()(Index r) const { visit(r); }
};

TEST(Threads, LongLoopsRunOnSeveralThreadsAndShortOnesOnTheCaller) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  ThreadCountGuard guard;
  set_thread_count(2);
  std::mutex mutex;
  std::set<std::thread::id> long_loop, short_loop, long_rows, short_rows;
  std::atomic<Index> visits{0};
  const auto record = [&](std::set<std::thread::id>& ids) {
    return [&ids, &mutex](Index) {
      std::lock_guard lock(mutex);
      ids.insert(std::this_thread::get_id());
    };
  };
  // One element per index: threaded from kParallelMinElements indices on.
  EigenBackend::for_each_index(2 * detail::kParallelMinElements, [&](Index i) {
    ++visits;
    if (i % 1024 == 0) record(long_loop)(i);
  });
  // 8192 cells (a 64² grid's drift fingerprint): too little work to be worth a parallel region.
  EigenBackend::for_each_index(8192, record(short_loop));
  // Rows: 64 rows of 1024 elements are threaded, 64 rows of 64 elements are not.
  EigenBackend::for_each_index(64, RowVisit{1024, record(long_rows)});
  EigenBackend::for_each_index(64, RowVisit{64, record(short_rows)});
  EXPECT_EQ(visits.load(), 2 * detail::kParallelMinElements);
  EXPECT_EQ(long_loop.size(), 2u) << "a loop of 2^16 elements must use both threads";
  EXPECT_EQ(long_rows.size(), 2u) << "64 rows of 1024 elements must use both threads";
  for (const auto* ids : {&short_loop, &short_rows}) {
    ASSERT_EQ(ids->size(), 1u);
    EXPECT_EQ(*ids->begin(), std::this_thread::get_id());
  }
  // sum_index weighs its kernel's work the same way.
  std::set<std::thread::id> summed;
  const Sums<1> total = EigenBackend::sum_index<1>(64, [&](Index r) {
    record(summed)(r);
    return Sums<1>{{static_cast<double>(r)}};
  });
  EXPECT_EQ(total.v[0], 63.0 * 64.0 / 2.0);
  EXPECT_EQ(summed.size(), 1u) << "64 one-element partials stay on the caller";
}

TEST(Threads, EveryBackendOperationGivesTheSameBitsForEveryThreadCount) {
  ThreadCountGuard guard;
  const int max_threads = kThreadsAvailable ? 4 : 1;
  // Both sides of: one reduction block (4096), the element-wise threshold (2^15), the direct
  // sum_index limit (2^16) and its blocks (1024), and lengths that are not multiples of anything.
  for (Index n :
       {Index{0}, Index{1}, Index{5}, Index{127}, Index{128}, Index{4095}, Index{4096}, Index{4097},
        Index{32767}, Index{32768}, Index{65536}, Index{65537}, Index{200003}}) {
    set_thread_count(1);
    const std::vector<double> reference = all_results(n);
    for (int t = 2; t <= max_threads; ++t) {
      set_thread_count(t);
      const std::vector<double> r = all_results(n);
      ASSERT_EQ(r.size(), reference.size());
      for (std::size_t i = 0; i < r.size(); ++i)
        ASSERT_TRUE(same_bits(r[i], reference[i]))
            << "n = " << n << ", " << t << " threads, result " << i << ": " << r[i] << " vs "
            << reference[i];
    }
  }
}

TEST(Threads, SumIndexFoldsInIndexOrderUpToItsDirectLimit) {
  // Up to 2^16 indices sum_index is exactly f(0) + f(1) + … added in order from zero — the bits
  // the built-in row kernels had before threads — with any number of threads.
  ThreadCountGuard guard;
  if (kThreadsAvailable) set_thread_count(3);
  const V x = random_vector(detail::kIndexSumDirectLimit, 7);
  const double* xs = x.data();
  double sequential = 0.0;
  for (Index i = 0; i < x.size(); ++i) sequential = sequential + xs[i] * 1.1;
  const Sums<1> s =
      EigenBackend::sum_index<1>(x.size(), [xs](Index i) { return Sums<1>{{xs[i] * 1.1}}; });
  EXPECT_TRUE(same_bits(s.v[0], sequential)) << s.v[0] << " vs " << sequential;
}

TEST(Threads, MaxNormAndAllFiniteStillSeeNanAndInfinityAnywhere) {
  ThreadCountGuard guard;
  if (kThreadsAvailable) set_thread_count(2);
  const Index n = 100000;
  for (Index where : {Index{0}, Index{4095}, Index{50000}, n - 1}) {
    V x = random_vector(n, 11);
    x[where] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(std::isnan(EigenBackend::max_norm(x))) << where;
    EXPECT_FALSE(EigenBackend::all_finite(x)) << where;
    x[where] = -std::numeric_limits<double>::infinity();
    EXPECT_EQ(EigenBackend::max_norm(x), std::numeric_limits<double>::infinity()) << where;
    EXPECT_FALSE(EigenBackend::all_finite(x)) << where;
  }
}

}  // namespace
}  // namespace rwd
