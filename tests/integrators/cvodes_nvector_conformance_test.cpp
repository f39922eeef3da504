// The op-by-op conformance suite (cvodes_nvector_conformance.hpp) on rewind's Eigen N_Vector
// (rewind/integrators/eigen_nvector.hpp) and on the Thrust N_Vector over the CPP device system
// (rewind/integrators/thrust_cvodes.hpp), each as vectors it owns and as views of backend
// vectors; reductions with the same bits for 1 and 2 threads. The distributed N_Vector runs the
// same suite across 1–4 MPI ranks (tests/distributed/distributed_nvector_test.cpp).
#include <gtest/gtest.h>

#include <deque>

#include "cvodes_nvector_conformance.hpp"
#include "rewind/integrators/eigen_nvector.hpp"
#include "rewind/parallel.hpp"
#include "thrust_nvector_harness.hpp"

namespace {

using namespace rwd::nvector_conformance;
using rwd::Index;

// 0, 1, odd sizes; past the Eigen backend's reduction block (4096) and the size from which its
// loops share out among threads (2^15), and past the Thrust reduction's second pass (8192).
const std::vector<Index> kSizes = {0, 1, 2, 3, 7, 33, 1001, 4099, 40001};

class EigenHarness : public Harness {
 public:
  explicit EigenHarness(bool views) : views_(views) {
    if (SUNContext_Create(nullptr, &context_) != 0) ADD_FAILURE() << "no SUNDIALS context";
  }
  ~EigenHarness() override { SUNContext_Free(&context_); }
  EigenHarness(const EigenHarness&) = delete;
  EigenHarness& operator=(const EigenHarness&) = delete;

  const char* name() const override { return views_ ? "Eigen (views)" : "Eigen"; }
  N_Vector make(const Values& global) override {
    const auto n = static_cast<Index>(global.size());
    N_Vector v;
    if (views_) {
      kept_.emplace_back(n);
      v = rwd::sundials::make_eigen_nvector_view(kept_.back(), context_);
    } else {
      v = rwd::sundials::make_eigen_nvector(n, context_);
    }
    std::copy(global.begin(), global.end(), rwd::sundials::map(v).data());
    return v;
  }
  Values read(N_Vector v) override {
    const auto m = rwd::sundials::map(v);
    return Values(m.data(), m.data() + m.size());
  }
  Values mine(const Values& global) override { return global; }
  N_Vector_ID id() const override { return SUNDIALS_NVEC_SERIAL; }
  bool host_arrays() const override { return true; }

 private:
  bool views_;
  std::deque<Eigen::VectorXd> kept_;
};

// Every reduction at 1 and 2 threads: the same bits.
void expect_thread_independent_reductions(Harness& h) {
  if (!rwd::kThreadsAvailable) GTEST_SKIP() << "a build without OpenMP has one thread";
  const int saved = rwd::thread_count();
  for (const Index n : {Index{1001}, Index{40001}, Index{100003}}) {
    rwd::set_thread_count(1);
    const Values one = reductions(h, n);
    rwd::set_thread_count(2);
    const Values two = reductions(h, n);
    for (std::size_t j = 0; j < one.size(); ++j)
      EXPECT_TRUE(same_bits(one[j], two[j]))
          << h.name() << ", n = " << n << ": reduction " << j << " " << one[j] << " vs " << two[j];
  }
  rwd::set_thread_count(saved);
}

TEST(NVectorConformance, Eigen) {
  EigenHarness h(false);
  expect_conformance(h, kSizes);
}

TEST(NVectorConformance, EigenViews) {
  EigenHarness h(true);
  expect_conformance(h, kSizes);
}

TEST(NVectorConformance, EigenReductionsDoNotDependOnTheThreadCount) {
  EigenHarness h(false);
  expect_thread_independent_reductions(h);
}

TEST(NVectorConformance, ThrustCpp) {
  ThrustHarness h(false);
  expect_conformance(h, kSizes);
}

TEST(NVectorConformance, ThrustCppViews) {
  ThrustHarness h(true);
  expect_conformance(h, kSizes);
}

// A view is the backend vector itself: what the stepper's callbacks get without a copy.
TEST(NVectorConformance, ViewsAreTheBackendVectors) {
  SUNContext context = nullptr;
  ASSERT_EQ(SUNContext_Create(nullptr, &context), 0);
  Eigen::VectorXd e = Eigen::VectorXd::LinSpaced(5, 1.0, 5.0);
  N_Vector ev = rwd::sundials::make_eigen_nvector_view(e, context);
  EXPECT_EQ(rwd::sundials::owned(ev), &e);
  EXPECT_EQ(N_VGetArrayPointer(ev), e.data());
  N_Vector array = rwd::sundials::make_eigen_nvector_view(e.data(), 5, context);
  EXPECT_EQ(rwd::sundials::owned(array), nullptr) << "a view of raw memory has no Eigen vector";
  EXPECT_EQ(N_VL1Norm(array), 15.0);
  N_Vector clone = N_VClone(array);
  ASSERT_NE(rwd::sundials::owned(clone), nullptr) << "a clone owns its values";
  EXPECT_TRUE(rwd::sundials::is_eigen_nvector(clone));
  rwd::ThrustBackend::Vector d = rwd::ThrustBackend::zeros(4);
  N_Vector dv = rwd::ThrustNVector::view(d, context);
  EXPECT_EQ(rwd::ThrustNVector::vector(dv), &d);
  EXPECT_EQ(rwd::ThrustNVector::vector(ev), nullptr) << "an Eigen vector is not a Thrust one";
  EXPECT_FALSE(rwd::sundials::is_eigen_nvector(dv));
  for (N_Vector v : {ev, array, clone, dv}) N_VDestroy(v);
  SUNContext_Free(&context);
}

}  // namespace
