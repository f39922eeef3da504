// StageAwareSchedule (rewind/schedule/stage_aware_schedule.hpp): the dynamic program of Zhang &
// Constantinescu over state and stage snapshots, then a stack machine that walks its choices.
#include "rewind/schedule/stage_aware_schedule.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "rewind/error.hpp"

namespace rwd {

namespace {
constexpr std::int64_t kInfinite = std::numeric_limits<std::int64_t>::max() / 4;
}  // namespace

// Row c (units) of each table, entry j (steps). S and T as in the header; the choices:
// state_choice k > 0: advance k and store y_{a+k} (k = j − 1: advance to the last step, store
// nothing); k < 0: advance −k − 1 and store the stages of that step; 0: free y_a and store the
// stages of step a in its place. T needs no choice: S(c, j) ≤ T(c, j) (S can drop its state for
// the stages), so T's segments store y_{a+1} — or, when S's choice is to drop it, its stages.
struct StageAwareSchedule::Tables {
  int rows = 0;  // units 0 .. rows − 1
  Index columns = 0;
  std::vector<std::int64_t> state, stage;
  std::vector<std::int32_t> state_choice;

  std::size_t at(int c, Index j) const {
    return static_cast<std::size_t>(c) * static_cast<std::size_t>(columns) +
           static_cast<std::size_t>(j);
  }
  std::int64_t S(int c, Index j) const { return c >= 1 ? state[at(c, j)] : kInfinite; }
  std::int64_t T(int c, Index j) const { return c >= 1 ? stage[at(c, j)] : kInfinite; }

  void fill(Index l, int units, int u) {
    rows = units + 1;
    columns = l + 1;
    const std::size_t size = static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns);
    state.assign(size, kInfinite);
    stage.assign(size, kInfinite);
    state_choice.assign(size, 0);
    std::vector<std::int64_t> shifted(static_cast<std::size_t>(columns));  // k + S(c, k)
    for (int c = 1; c <= units; ++c) {
      // T(c, ·) reads rows c − u only.
      if (c >= u) {
        stage[at(c, 0)] = 0;
        stage[at(c, 1)] = 0;
        if (l >= 2) stage[at(c, 2)] = 0;
        const int free = c - u;
        for (Index j = 3; j <= l; ++j) {
          const std::int64_t keep_state = free >= 1 ? S(free, j - 1) : kInfinite;
          const std::int64_t keep_stages = free >= u ? T(free, j - 1) : kInfinite;
          stage[at(c, j)] = std::min(keep_stages, keep_state);
        }
      }
      state[at(c, 0)] = 0;
      state[at(c, 1)] = 0;
      shifted[0] = 0;
      shifted[1] = 1;
      const std::int64_t* below = c >= 2 ? &state[at(c - 1, 0)] : nullptr;
      const std::int64_t* below_stage = c - 1 >= u ? &stage[at(c - 1, 0)] : nullptr;
      const std::int64_t* row = &state[at(c, 0)];
      for (Index j = 2; j <= l; ++j) {
        std::int64_t best = (j - 1) + row[j - 1];
        std::int32_t choice = static_cast<std::int32_t>(j - 1);
        if (below) {  // store y_{a+k}, 1 ≤ k ≤ j − 2: two passes, the first vectorises
          std::int64_t m = kInfinite;
          for (Index k = 1; k <= j - 2; ++k) m = std::min(m, shifted[k] + below[j - k]);
          if (m < best) {
            Index k = 1;
            while (shifted[k] + below[j - k] != m) ++k;
            best = m;
            choice = static_cast<std::int32_t>(k);
          }
        }
        if (below_stage) {  // the stages of step a + k − 1, 2 ≤ k ≤ j − 1
          std::int64_t m = kInfinite;
          for (Index k = 2; k <= j - 1; ++k)
            m = std::min(m, shifted[k - 1] + below_stage[j - k + 1]);
          if (m < best) {
            Index k = 2;
            while (shifted[k - 1] + below_stage[j - k + 1] != m) ++k;
            best = m;
            choice = -static_cast<std::int32_t>(k);
          }
        }
        if (c >= u && stage[at(c, j)] < best) {  // y_a's last use: its unit goes to its stages
          best = stage[at(c, j)];
          choice = 0;
        }
        state[at(c, j)] = best;
        state_choice[at(c, j)] = choice;
        shifted[static_cast<std::size_t>(j)] = j + best;
      }
    }
  }
};

StageAwareSchedule::StageAwareSchedule(Index steps, int units, int stage_units)
    : steps_(steps), units_(units), stage_units_(stage_units) {
  if (steps < 1)
    detail::fail<InvalidArgument>("stage-aware schedule: steps l = ", steps, " must be >= 1");
  if (steps > kStageAwareMaxSteps)
    detail::fail<InvalidArgument>("stage-aware schedule: steps l = ", steps, " is above ",
                                  kStageAwareMaxSteps,
                                  ", the most its O(c l^2) dynamic program plans; use revolve");
  if (units < 1)
    detail::fail<InvalidArgument>("stage-aware schedule: units c = ", units, " must be >= 1");
  if (stage_units < 1)
    detail::fail<InvalidArgument>("stage-aware schedule: stage units u = ", stage_units,
                                  " must be >= 1 (the slots one step's stages take)");
  // Beyond (l − 1)·u + 1 units every step but the last has its stages stored: nothing to gain.
  const Index useful = (steps - 1) * static_cast<Index>(stage_units) + 1;
  const int rows = static_cast<int>(std::min<Index>(units, useful));
  auto tables = std::make_shared<Tables>();
  tables->fill(steps, rows, stage_units);
  // S(c, l) includes dropping y_0 for the stages of step 0 at once: then y_0 is never stored.
  extra_ = tables->S(rows, steps);
  start_with_stages_ = steps >= 2 && tables->state_choice[tables->at(rows, steps)] == 0;
  units_used_ = rows;
  tables_ = std::move(tables);
  reset();
}

std::string StageAwareSchedule::name() const {
  return "stage-aware(c = " + std::to_string(units_) + ", u = " + std::to_string(stage_units_) +
         ")";
}

std::unique_ptr<Schedule> StageAwareSchedule::clone() const {
  auto copy = std::make_unique<StageAwareSchedule>(*this);
  copy->reset();
  return copy;
}

void StageAwareSchedule::reset() {
  stack_.clear();
  used_ = 0;
  finished_ = false;
  // Pushed in reverse: the top of the stack runs first. Each segment frees its own first
  // snapshot when it is done with it.
  if (start_with_stages_) {
    stack_.push_back({Task::stage_segment, Action::done(), 0, steps_, units_used_, 0});
    push_emit(Action::store_stages(0, 0));
  } else {
    stack_.push_back({Task::state_segment, Action::done(), 0, steps_, units_used_, 0});
    push_emit(Action::store(0, 0));
  }
}

Action StageAwareSchedule::next() {
  while (!stack_.empty()) {
    const Item item = stack_.back();
    stack_.pop_back();
    if (item.task != Task::emit) {
      expand(item);
      continue;
    }
    const Action& a = item.action;
    if (a.kind == ActionKind::store) ++used_;
    if (a.kind == ActionKind::store_stages) used_ += stage_units_;
    if (a.kind == ActionKind::free) used_ -= a.slot == used_ - 1 ? 1 : stage_units_;
    return a;
  }
  finished_ = true;
  return Action::done();
}

void StageAwareSchedule::expand(const Item& item) {
  if (item.task == Task::state_segment)
    expand_state(item);
  else
    expand_stage(item);
}

// Current state y_a, held in item.slot (the last slot in use); steps [a, a + j) to reverse with
// c units; y_a is freed at the end.
void StageAwareSchedule::expand_state(const Item& item) {
  const Index a = item.start, j = item.length;
  const int c = item.units;
  if (j == 1) {
    push_emit(Action::free(item.slot, a));
    push_emit(Action::reverse(a));
    return;
  }
  const auto left = [&](Index k) {  // restore y_a and reverse [a, a + k); that frees y_a
    if (k < 1) {
      push_emit(Action::free(item.slot, a));
      return;
    }
    stack_.push_back({Task::state_segment, Action::done(), a, k, c, item.slot});
    push_emit(Action::restore(item.slot, a));
  };
  const std::int32_t choice = tables_->state_choice[tables_->at(c, j)];
  const int slot = used_;
  if (choice == 0) {  // y_a is not needed again: its stages instead
    stack_.push_back({Task::stage_segment, Action::done(), a, j, c, item.slot});
    push_emit(Action::store_stages(item.slot, a));
    push_emit(Action::free(item.slot, a));
  } else if (choice == j - 1) {  // advance to the last step and reverse it from there
    left(j - 1);
    push_emit(Action::reverse(a + j - 1));
    push_emit(Action::advance(a + j - 1));
  } else if (choice > 0) {
    const Index k = choice;
    left(k);
    push_state_child(a + k, j - k, c - 1);
    push_emit(Action::advance(a + k));
  } else {
    const Index k = -static_cast<Index>(choice);
    left(k - 1);
    stack_.push_back({Task::stage_segment, Action::done(), a + k - 1, j - k + 1, c - 1, slot});
    push_emit(Action::store_stages(slot, a + k - 1));
    push_emit(Action::advance(a + k - 1));
  }
}

// The stages of step a held in item.slot, current state y_{a+1}; steps [a, a + j), c units; the
// stages are freed at the end.
void StageAwareSchedule::expand_stage(const Item& item) {
  const Index a = item.start, j = item.length;
  const int c = item.units;
  push_emit(Action::free(item.slot, a));
  push_emit(Action::reverse_from_stages(a, item.slot));
  if (j == 1) return;
  if (j == 2) {
    push_emit(Action::reverse(a + 1));
    return;
  }
  // S(c − u, j − 1) ≤ T(c − u, j − 1): S's own choice says whether y_{a+1} or its stages.
  push_state_child(a + 1, j - 1, c - stage_units_);
}

void StageAwareSchedule::push_state_child(Index a, Index j, int c) {
  const int slot = used_;
  if (j >= 2 && tables_->state_choice[tables_->at(c, j)] == 0) {  // stored only to be dropped
    stack_.push_back({Task::stage_segment, Action::done(), a, j, c, slot});
    push_emit(Action::store_stages(slot, a));
  } else {
    stack_.push_back({Task::state_segment, Action::done(), a, j, c, slot});
    push_emit(Action::store(slot, a));
  }
}

}  // namespace rwd
