// checkpoint/schedule/src/stage_aware_tables.hpp — the tables of StageAwareSchedule's dynamic
// program (the recurrence is written out in rewind/schedule/stage_aware_schedule.hpp): S(c, j),
// T(c, j) and S's choices for every c ≤ units and j ≤ l. Private to the schedule part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rewind/schedule/stage_aware_schedule.hpp"

namespace rwd {

namespace stage_aware_tables {
using Cost = std::int32_t;
inline constexpr Cost kSaturated = Cost{1} << 29;
}  // namespace stage_aware_tables

// Row c (units) of each table, entry j (steps). The choices: state_choice k > 0: advance k and
// store y_{a+k} (k = j − 1: advance to the last step, store nothing); k < 0: advance −k − 1 and
// store the stages of that step; 0: free y_a and store the stages of step a in its place. T needs
// no choice: S(c, j) ≤ T(c, j) (S can drop its state for the stages), so T's segments store
// y_{a+1} — or, when S's choice is to drop it, its stages.
//
// Costs are 32-bit and saturate at kSaturated (2^29 evaluations): an entry at kSaturated costs
// at least that much, or is impossible (T with fewer than u units). An entry below it is exact,
// and so is every entry its choice leads to (each is a term of its sum), so a plan whose total is
// below kSaturated is exact throughout; the constructor refuses the others.
struct StageAwareSchedule::Tables {
  using Cost = stage_aware_tables::Cost;
  static constexpr Cost kSaturated = stage_aware_tables::kSaturated;

  int rows = 0;  // units 0 .. rows − 1
  Index columns = 0;
  std::vector<Cost> state, stage;
  std::vector<std::int32_t> state_choice;
  // Split candidates evaluated while filling, of the l·(l − 1)/2 per row and kind an exhaustive
  // scan takes: what the lower bounds (stage_aware_tables.cpp) saved.
  std::int64_t candidates_scanned = 0;

  std::size_t at(int c, Index j) const {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(columns) +
           static_cast<std::size_t>(j);
  }
  Cost S(int c, Index j) const { return c >= 1 ? state[at(c, j)] : kSaturated; }
  Cost T(int c, Index j) const { return c >= 1 ? stage[at(c, j)] : kSaturated; }

  // Fills rows 0 .. units for l steps and u units per stage snapshot.
  void fill(Index l, int units, int u);
};

}  // namespace rwd
