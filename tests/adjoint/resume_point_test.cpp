// The progress record of a resumable checkpointed run saves the sweep state whole: every field
// of rwd::SweepState comes back from the bytes as it went in, with the held slots, the adjoint
// and the drift monitor's bytes; a record cut short or from another version is refused.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "rewind/adjoint/resume_point.hpp"
#include "rewind/adjoint/sweep_state.hpp"
#include "rewind/error.hpp"

namespace rwd {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

ResumePoint sample_point() {
  ResumePoint point;
  point.actions_done = 1234;
  point.position = 77;
  SweepState& s = point.sweep;
  s.reached = 99;
  s.adjoint_at = 61;
  s.steps = 100;
  s.terminal_done = true;
  s.advances = 321;
  s.stores = 45;
  s.restores = 67;
  s.reverses = 39;
  s.stage_reverses = 12;
  s.loss = 0.1 + 0.2;
  s.final_t = 3.0 / 7.0;
  s.final_change = 1e-300;
  point.held = {{0, 0, 0}, {3, 1, 40}, {7, 0, 88}};
  point.lambda = {1.5, -2.5};
  point.mu = {0.25};
  point.y_final = {4.0, 8.0};
  point.drift = {std::byte{1}, std::byte{2}, std::byte{3}};
  return point;
}

TEST(ResumePoint, TheSweepStateComesBackWhole) {
  const ResumePoint in = sample_point();
  const std::vector<std::byte> bytes = in.encode();
  EXPECT_LE(static_cast<std::int64_t>(bytes.size()),
            ResumePoint::capacity(8, 2, 1, in.drift.size()));
  const ResumePoint out = ResumePoint::decode(bytes);
  EXPECT_EQ(out.actions_done, in.actions_done);
  EXPECT_EQ(out.position, in.position);
  const SweepState &a = in.sweep, &b = out.sweep;
  EXPECT_EQ(b.reached, a.reached);
  EXPECT_EQ(b.adjoint_at, a.adjoint_at);
  EXPECT_EQ(b.steps, a.steps);
  EXPECT_EQ(b.terminal_done, a.terminal_done);
  EXPECT_EQ(b.advances, a.advances);
  EXPECT_EQ(b.stores, a.stores);
  EXPECT_EQ(b.restores, a.restores);
  EXPECT_EQ(b.reverses, a.reverses);
  EXPECT_EQ(b.stage_reverses, a.stage_reverses);
  EXPECT_TRUE(same_bits(b.loss, a.loss));
  EXPECT_TRUE(same_bits(b.final_t, a.final_t));
  EXPECT_TRUE(same_bits(b.final_change, a.final_change));
  ASSERT_EQ(out.held.size(), in.held.size());
  for (std::size_t i = 0; i < in.held.size(); ++i) {
    EXPECT_EQ(out.held[i].slot, in.held[i].slot);
    EXPECT_EQ(out.held[i].stage_head, in.held[i].stage_head);
    EXPECT_EQ(out.held[i].step, in.held[i].step);
  }
  EXPECT_EQ(out.lambda, in.lambda);
  EXPECT_EQ(out.mu, in.mu);
  EXPECT_EQ(out.y_final, in.y_final);
  EXPECT_EQ(out.drift, in.drift);

  // A run before its terminal cost: the flag comes back false.
  ResumePoint forward = sample_point();
  forward.sweep.terminal_done = false;
  EXPECT_FALSE(ResumePoint::decode(forward.encode()).sweep.terminal_done);
}

TEST(ResumePoint, ACutOrForeignRecordIsRefused) {
  std::vector<std::byte> bytes = sample_point().encode();
  std::vector<std::byte> cut(bytes.begin(), bytes.end() - 1);
  EXPECT_THROW(ResumePoint::decode(cut), StorageError);
  bytes[0] ^= std::byte{0xff};
  EXPECT_THROW(ResumePoint::decode(bytes), StorageError);
}

}  // namespace
}  // namespace rwd
