// Contract 2's comparison, written once: two adjoint results (any drivers, schedules, stores) on
// backend B hold the same loss, dJ/dy0, dJ/dθ and final state bit for bit — the bytes are
// compared, never a tolerance.
//
//   rwd::testing::expect_same_gradient_bits<B>(result, reference);   // inside a SCOPED_TRACE
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "support/host_vectors.hpp"

namespace rwd::testing {

template <class B, class Result, class Reference>
void expect_same_gradient_bits(const Result& result, const Reference& reference) {
  EXPECT_EQ(std::memcmp(&result.loss, &reference.loss, sizeof(double)), 0)
      << result.loss << " vs " << reference.loss;
  EXPECT_EQ(to_host<B>(result.grad_y0), to_host<B>(reference.grad_y0));
  EXPECT_EQ(to_host<B>(result.grad_theta), to_host<B>(reference.grad_theta));
  EXPECT_EQ(to_host<B>(result.y_final), to_host<B>(reference.y_final));
}

}  // namespace rwd::testing
