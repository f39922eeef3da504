// StageAwareSchedule (rewind/schedule/stage_aware_schedule.hpp): the dynamic program of Zhang &
// Constantinescu over state and stage snapshots (its tables: stage_aware_tables.cpp), then a
// stack machine that walks its choices.
#include "rewind/schedule/stage_aware_schedule.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "stage_aware_tables.hpp"

namespace rwd {

namespace {

template <class... Parts>
std::string message(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

// The rows a plan fills: beyond (l − 1)·u + 1 units every step but the last has its stages
// stored, so more units gain nothing.
int rows_that_matter(Index steps, int units, int stage_units) {
  const Index useful = (steps - 1) * static_cast<Index>(stage_units) + 1;
  return static_cast<int>(std::min<Index>(units, useful));
}

// Why StageAwareSchedule(steps, units, stage_units) cannot be planned, or "" when it can.
std::string refusal(Index steps, int units, int stage_units) {
  if (steps < 1) return message("steps l = ", steps, " must be >= 1");
  if (units < 1) return message("units c = ", units, " must be >= 1");
  if (stage_units < 1)
    return message("stage units u = ", stage_units,
                   " must be >= 1 (the slots one step's stages take)");
  if (steps > kStageAwareMaxSteps)
    return message("steps l = ", steps, " is above ", kStageAwareMaxSteps,
                   ", the most it plans; use revolve");
  const int rows = rows_that_matter(steps, units, stage_units);
  const Index entries = static_cast<Index>(rows + 1) * (steps + 1);
  if (entries > kStageAwareMaxTableEntries)
    return message("l = ", steps, " steps with c = ", rows, " units that matter need a table of ",
                   entries, " entries, above its limit of ", kStageAwareMaxTableEntries,
                   "; use revolve or fewer units");
  // Revolve in the same units bounds the plan's count from above.
  if (revolve_advances(steps, units) >= stage_aware_tables::kSaturated)
    return message("l = ", steps, " steps in c = ", units,
                   " units may recompute 2^29 steps or more, more than its tables count; "
                   "give it more units");
  return {};
}

}  // namespace

bool stage_aware_plannable(Index steps, int units, int stage_units) {
  return refusal(steps, units, stage_units).empty();
}

StageAwareSchedule::StageAwareSchedule(Index steps, int units, int stage_units)
    : steps_(steps), units_(units), stage_units_(stage_units) {
  if (const std::string why = refusal(steps, units, stage_units); !why.empty())
    detail::fail<InvalidArgument>("stage-aware schedule: ", why);
  const int rows = rows_that_matter(steps, units, stage_units);
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
