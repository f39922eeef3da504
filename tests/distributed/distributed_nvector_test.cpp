// The op-by-op N_Vector conformance suite (tests/integrators/cvodes_nvector_conformance.hpp) on
// rewind's distributed N_Vector (rewind/distributed/distributed_nvector.hpp), run by mpiexec on 1–4
// ranks: split vectors of several row layouts (odd sizes, fields, rows that do not divide evenly
// among the ranks) and replicated ones (sizes 0, 1, odd); every reduction of a split vector with
// the same bits on every rank count and thread count as on one process.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <memory>

#include "distributed_test_support.hpp"
#include "integrators/cvodes_nvector_conformance.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/distributed_nvector.hpp"
#include "rewind/distributed/row_layout.hpp"

namespace {

using namespace rwd::nvector_conformance;
using rwd::Communicator;
using rwd::DistributedVector;
using rwd::Index;
using rwd::RowLayout;

// Split vectors of one row layout over `comm`, or (no layout) replicated vectors of any size.
class DistributedHarness : public Harness {
 public:
  explicit DistributedHarness(std::unique_ptr<RowLayout> layout, bool views)
      : layout_(std::move(layout)), views_(views) {
    if (SUNContext_Create(nullptr, &context_) != 0) ADD_FAILURE() << "no SUNDIALS context";
  }
  ~DistributedHarness() override { SUNContext_Free(&context_); }
  DistributedHarness(const DistributedHarness&) = delete;
  DistributedHarness& operator=(const DistributedHarness&) = delete;

  const char* name() const override {
    return layout_ ? "distributed (split)" : "distributed (replicated)";
  }
  bool supports(Index n) const override { return !layout_ || n == layout_->global_size(); }
  N_Vector make(const Values& global) override {
    DistributedVector like;
    like.layout = layout_.get();
    like.local = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(mine(global).size()));
    N_Vector v;
    if (views_) {
      kept_.push_back(like);
      v = rwd::sundials::make_distributed_nvector_view(kept_.back(), context_);
    } else {
      v = rwd::sundials::make_distributed_nvector(like, context_);
    }
    const Values part = mine(global);
    std::copy(part.begin(), part.end(), rwd::sundials::distributed_vector(v)->local.data());
    return v;
  }
  Values read(N_Vector v) override {
    return rwd::test::local_values(*rwd::sundials::distributed_vector(v));
  }
  Values mine(const Values& global) override {
    if (!layout_) return global;
    Values part(static_cast<std::size_t>(layout_->local_size()));
    for (Index i = 0; i < layout_->local_size(); ++i)
      part[static_cast<std::size_t>(i)] =
          global[static_cast<std::size_t>(layout_->global_index(i))];
    return part;
  }
  N_Vector_ID id() const override { return SUNDIALS_NVEC_CUSTOM; }
  bool host_arrays() const override { return false; }

 private:
  std::unique_ptr<RowLayout> layout_;
  bool views_;
  std::deque<DistributedVector> kept_;
};

struct Shape {
  Index fields, rows, row_length;
};
// At least 4 rows (a row per rank at 4 ranks); sizes 4, 5 (odd), 42, 1017 (odd) and 32896 (past
// the 2^15 values from which a rank's loops share out among threads).
const Shape kShapes[] = {{1, 4, 1}, {1, 5, 1}, {2, 7, 3}, {1, 9, 113}, {2, 64, 257}};

TEST(DistributedNVectorConformance, SplitVectors) {
  for (const Shape& s : kShapes)
    for (const bool views : {false, true}) {
      DistributedHarness h(
          std::make_unique<RowLayout>(rwd::test::world(), s.fields, s.rows, s.row_length), views);
      expect_conformance(h, {s.fields * s.rows * s.row_length});
    }
}

TEST(DistributedNVectorConformance, ReplicatedVectors) {
  DistributedHarness h(nullptr, false);
  expect_conformance(h, {0, 1, 2, 3, 7, 33, 1001});
}

// The split vector's communicator is the layout's; a replicated vector has none.
TEST(DistributedNVectorConformance, Communicator) {
  DistributedHarness split(std::make_unique<RowLayout>(rwd::test::world(), 1, 4, 2), false);
  DistributedHarness replicated(nullptr, false);
  Owned a(split), b(replicated);
  N_Vector s = a(Values(8, 1.0)), r = b(Values(3, 1.0));
  ASSERT_NE(N_VGetCommunicator(s), nullptr);
  EXPECT_EQ(*static_cast<MPI_Comm*>(N_VGetCommunicator(s)), rwd::test::world().handle());
  EXPECT_EQ(N_VGetCommunicator(r), nullptr);
}

// Every reduction of a split vector: the bits of a one-process layout of the same shape, on
// every rank count, with 1 and 2 threads per rank.
TEST(DistributedNVectorConformance, ReductionsHaveTheBitsOfOneProcess) {
  rwd::test::ThreadCountGuard restore;
  for (const Shape& s : kShapes) {
    const Index n = s.fields * s.rows * s.row_length;
    DistributedHarness one(
        std::make_unique<RowLayout>(Communicator(MPI_COMM_SELF), s.fields, s.rows, s.row_length),
        false);
    rwd::set_thread_count(1);
    const Values reference = reductions(one, n);
    for (const int threads : {1, 2}) {
      if (threads > 1 && !rwd::kThreadsAvailable) break;  // a build without OpenMP: one thread
      rwd::set_thread_count(threads);
      DistributedHarness split(
          std::make_unique<RowLayout>(rwd::test::world(), s.fields, s.rows, s.row_length), false);
      const Values r = reductions(split, n);
      for (std::size_t j = 0; j < r.size(); ++j)
        EXPECT_TRUE(same_bits(r[j], reference[j]))
            << "n = " << n << ", " << threads << " threads: reduction " << j << " is " << r[j]
            << ", on one process " << reference[j];
    }
  }
}

// The drift monitor's fingerprint of a split state sums each row by the vectorised range kernel
// (DistributedBackend::sum_index_ranges): sum_index's bits with the per-index kernel, split or
// replicated, with 1 and 2 threads.
TEST(DistributedBackend, FingerprintSumsByRangesAreSumIndexsBits) {
  rwd::test::ThreadCountGuard restore;
  const std::uint64_t seed = 0x5EEDF00DULL;
  auto expect_same = [&](const DistributedVector& x, Index n, const char* what) {
    using B = rwd::DistributedBackend;
    const rwd::Sums<8> each = B::sum_index<8>(n, rwd::detail::FingerprintKernel{B::data(x), seed});
    const rwd::Sums<8> ranges = B::sum_index_ranges<8>(n, [&](Index begin, Index end) {
      return rwd::detail::fingerprint_range(B::data(x), seed, begin, end);
    });
    for (int j = 0; j < 8; ++j)
      EXPECT_TRUE(same_bits(each.v[j], ranges.v[j]))
          << what << ", n = " << n << ": sum " << j << " is " << ranges.v[j] << " by ranges, "
          << each.v[j] << " index by index";
  };
  for (const int threads : {1, 2}) {
    if (threads > 1 && !rwd::kThreadsAvailable) break;
    rwd::set_thread_count(threads);
    for (const Shape& s : kShapes) {
      const Index n = s.fields * s.rows * s.row_length;
      rwd::DistributedBackend::use_layout(
          std::make_shared<RowLayout>(rwd::test::world(), s.fields, s.rows, s.row_length));
      DistributedVector x = rwd::DistributedBackend::zeros(n);
      for (Index i = 0; i < x.local.size(); ++i)
        x.local[i] = std::sin(0.37 * static_cast<double>(i + 1)) * 1e3;
      expect_same(x, n, "split");
    }
    for (const Index n : {Index{3}, Index{70001}}) {  // no layout of these sizes: replicated
      DistributedVector x = rwd::DistributedBackend::zeros(n);
      for (Index i = 0; i < n; ++i) x.local[i] = std::cos(0.11 * static_cast<double>(i)) - 0.5;
      expect_same(x, n, "replicated");
    }
  }
}

}  // namespace
