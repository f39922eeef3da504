// The op-by-op N_Vector conformance suite (cvodes_nvector_conformance.hpp) on the Thrust N_Vector
// over Thrust's OMP device system, whose reductions must give the CPP system's bits for any thread
// count.
#include <gtest/gtest.h>
#include <omp.h>

#include "cvodes_nvector_conformance.hpp"
#include "rewind/parallel.hpp"
#include "thrust_nvector_harness.hpp"

namespace {

using namespace rwd::nvector_conformance;
using rwd::Index;

TEST(NVectorConformanceOmp, ThrustOmp) {
  ThrustHarness h(false);
  expect_conformance(h, {0, 1, 2, 3, 7, 33, 1001, 4099, 40001});
}

TEST(NVectorConformanceOmp, ReductionsDoNotDependOnTheThreadCount) {
  ThrustHarness h(true);
  const int saved = omp_get_max_threads();
  for (const Index n : {Index{1001}, Index{40001}}) {
    omp_set_num_threads(1);
    const Values one = reductions(h, n);
    omp_set_num_threads(3);
    const Values three = reductions(h, n);
    for (std::size_t j = 0; j < one.size(); ++j)
      EXPECT_TRUE(same_bits(one[j], three[j])) << "n = " << n << ": reduction " << j;
  }
  omp_set_num_threads(saved);
}

}  // namespace
