// rewind/schedule/revolve_schedule.hpp — the optimal offline binomial checkpointing schedule
// of Griewank & Walther ("Algorithm 799: revolve", ACM TOMS 26(1), 19–45, 2000).
//
//   rwd::RevolveSchedule schedule(/*steps=*/1000000, /*snapshots=*/20);
//   for (rwd::Action a = schedule.next(); a.kind != rwd::ActionKind::done; a = schedule.next())
//     driver.execute(a);
//   // advances == rwd::revolve_advances(1000000, 20): the minimum
//   (rewind/schedule/revolve_cost.hpp)
//
// Reversing steps [s, e) from a stored y_s with c' snapshots (the one holding y_s included):
// if e − s = 1, reverse step s; otherwise advance to a split point m, store y_m (unless m = e − 1,
// whose state is reversed at once), reverse [m, e) with c' − 1 snapshots, free y_m, restore y_s
// and reverse [s, m) with c'. With r the smallest repetition number with β(c', r) ≥ e − s
// (β(c, r) = C(c + r, c)), the split m = s + j is optimal for
//     j = β(c', r − 1)               if e − s ≥ β(c', r − 1) + β(c' − 1, r − 1),
//     j = (e − s) − β(c' − 1, r − 1)  otherwise,
// because then [s, m) needs at most r − 1 repetitions with c' snapshots and [m, e) at most r with
// c' − 1, the decomposition β(c', r) = β(c', r − 1) + β(c' − 1, r) behind the closed form
// p(l, c) = r·l − β(c + 1, r − 1). The repetition numbers of the two parts follow from r in O(1)
// (exactly r − 1 on the left; r or r − 1 on the right), so each range carries (r, β(c', r − 1))
// on the snapshot stack and a split costs a few multiplications and gcds — O(1) per action; the
// only O(min(c, r) · log l) work is finding r(l, c) once, in the constructor.
//
// Memory: a stack of at most min(c, l) snapshot positions — O(c), never O(l). Slot of the snapshot
// at stack depth d is d; slot indices are < min(c, l). At most c snapshots are held, including
// y_0. With c ≥ l − 1 it stores y_0 … y_{l−2} and recomputes nothing (l − 1 advances); with c = 1
// it recomputes from y_0 for every step (l(l − 1)/2 advances). Arithmetic is 64-bit and checked.
//
// Counts besides advances: l reverses, l − 1 restores (every reverse but the first starts from a
// snapshot), and as many stores as frees. The optimal split is not unique; taking the longest left
// part, as here, does not minimise stores (≈ 0.91·l of them for l = 10^7, c = 50 — a store is one
// state copy, cheap in RAM). A store-minimising tie-break matters for disk stores.
#pragma once

#include <memory>

#include <string>
#include <vector>

#include "rewind/schedule/schedule.hpp"

namespace rwd {

class RevolveSchedule final : public Schedule {
 public:
  // l ≥ 1 steps, c ≥ 1 snapshots (y_0's included). Throws InvalidArgument otherwise.
  RevolveSchedule(Index steps, int snapshots);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return snapshots_; }
  std::string name() const override;  // "revolve(c = 20)"
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<RevolveSchedule>(*this);
    copy->reset();
    return copy;
  }

  // r(l, c): the largest number of times any step is advanced (rewind/schedule/revolve_cost.hpp).
  Index repetitions() const { return repetitions_; }

 private:
  // A snapshot of y_step, and for the range [step, fine) it heads — the range reversed when it is
  // on top of the stack — the repetition number r and β(c', r − 1).
  struct Entry {
    Index step;
    Index r;
    Index beta;
  };

  Index steps_;
  int snapshots_;
  Index repetitions_;   // r(l, c)
  Index beta_initial_;  // β(c, r − 1)

  std::vector<Entry> stack_;
  Index current_ = 0;    // step of the current state
  Index fine_ = 0;       // the adjoint is at this step: steps ≥ fine_ are reversed
  Index pending_r_ = 0;  // (r, β) of the range that starts at the split point just advanced to
  Index pending_beta_ = 0;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace rwd
