// Keyed noise across ranks: a vector split by rows draws, on every rank, the one-process numbers
// at its global indices, for any rank count (a rank's slice may begin inside a Box–Muller pair).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/integrators/keyed_noise.hpp"

namespace rwd {
namespace {

using B = DistributedBackend;

TEST(DistributedKeyedNoise, EveryRankDrawsTheOneProcessNumbersAtItsGlobalIndices) {
  // 7 rows of 3 values: odd row lengths put slice starts inside pairs for some rank counts.
  for (Index row_length : {3, 4}) {
    auto layout = std::make_shared<const RowLayout>(test::world(), 1, 7, row_length);
    B::use_layout(layout);
    const Index n = layout->global_size();
    DistributedVector split = B::zeros(n);
    const NoiseKey key{/*seed=*/12345, /*step=*/17, /*stage=*/2, NoisePurpose::brownian_increment};
    fill_keyed_normals<B>(key, 0.5, split);

    EigenBackend::Vector whole = EigenBackend::zeros(n);
    fill_keyed_normals<EigenBackend>(key, 0.5, whole);
    std::vector<double> expected;
    for (Index i = 0; i < B::host_size(split); ++i)
      expected.push_back(whole[B::global_index(split, i)]);
    EXPECT_TRUE(test::same_bits(test::local_values(split), expected))
        << "row length " << row_length << ", rank " << test::world().rank();
  }
}

}  // namespace
}  // namespace rwd
