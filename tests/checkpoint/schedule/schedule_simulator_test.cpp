// The schedule simulator: accepts valid streams with the right counts, and names the first
// violation of deliberately broken ones; the cost model's predictions.
#include "rewind/schedule/schedule_simulator.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

// A hand-written stream of actions as a Schedule.
class ListSchedule final : public Schedule {
 public:
  ListSchedule(Index steps, int slots, std::vector<Action> actions)
      : steps_(steps), slots_(slots), actions_(std::move(actions)) {}
  Action next() override {
    return position_ < actions_.size() ? actions_[position_++] : Action::done();
  }
  Index steps() const override { return steps_; }
  int slots() const override { return slots_; }
  std::string name() const override { return "list"; }
  void reset() override { position_ = 0; }
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<ListSchedule>(*this);
    copy->reset();
    return copy;
  }

 private:
  Index steps_;
  int slots_;
  std::vector<Action> actions_;
  std::size_t position_ = 0;
};

// A valid stream for l = 4 with 2 slots: y_0 and y_2 stored.
std::vector<Action> valid_four() {
  return {Action::store(0, 0),   Action::advance(2),    Action::store(1, 2), Action::advance(3),
          Action::reverse(3),    Action::restore(1, 2), Action::reverse(2),  Action::free(1, 2),
          Action::restore(0, 0), Action::advance(1),    Action::reverse(1),  Action::restore(0, 0),
          Action::reverse(0),    Action::free(0, 0),    Action::done()};
}

// The violation a broken stream raises: its index and message.
std::pair<Index, std::string> violation_of(Index steps, int slots, std::vector<Action> actions,
                                           SimulatorOptions options = {}) {
  ListSchedule schedule(steps, slots, std::move(actions));
  try {
    simulate(schedule, options);
  } catch (const ScheduleViolation& e) {
    return {e.action_index(), e.what()};
  }
  return {-1, "no violation"};
}

using testing::contains;

TEST(ScheduleSimulator, CountsAValidStream) {
  ListSchedule schedule(4, 2, valid_four());
  const ScheduleCost cost = simulate(schedule);
  EXPECT_EQ(cost.steps, 4);
  EXPECT_EQ(cost.slots, 2);
  EXPECT_EQ(cost.advances, 2 + 1 + 1);
  EXPECT_EQ(cost.first_sweep_advances, 3);
  EXPECT_EQ(cost.recomputed_steps, 1);
  EXPECT_EQ(cost.stores, 2);
  EXPECT_EQ(cost.restores, 3);
  EXPECT_EQ(cost.reverses, 4);
  EXPECT_EQ(cost.frees, 2);
  EXPECT_EQ(cost.peak_slots, 2);
  EXPECT_EQ(cost.actions, 15);
  EXPECT_TRUE(contains(cost.to_string(), "4 advances (3 first sweep, 1 recomputed)"));
  // simulate() resets first: a second run gives the same cost.
  EXPECT_EQ(simulate(schedule).advances, 4);
}

TEST(ScheduleSimulator, RestoreOfAnEmptySlot) {
  auto actions = valid_four();
  actions[8] = Action::restore(1, 2);  // slot 1 was freed at #7
  const auto [index, message] = violation_of(4, 2, actions);
  EXPECT_EQ(index, 8);
  EXPECT_TRUE(contains(message, "action #8 'restore y_2 from slot 1': slot 1 is empty")) << message;
  EXPECT_TRUE(contains(message, "schedule 'list' (l = 4, c = 2)")) << message;
}

TEST(ScheduleSimulator, OverBudget) {
  // A third snapshot with a budget of two: slot 2 does not exist.
  const auto [index, message] =
      violation_of(4, 2,
                   {Action::store(0, 0), Action::advance(1), Action::store(1, 1),
                    Action::advance(2), Action::store(2, 2)});
  EXPECT_EQ(index, 4);
  EXPECT_TRUE(contains(message, "slot 2 is outside [0, 2)")) << message;
  // Storing into an occupied slot instead.
  const auto [index2, message2] =
      violation_of(4, 2,
                   {Action::store(0, 0), Action::advance(1), Action::store(1, 1),
                    Action::advance(2), Action::store(1, 2)});
  EXPECT_EQ(index2, 4);
  EXPECT_TRUE(contains(message2, "slot 1 is occupied by y_1")) << message2;
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::store(-1, 0)}).second, "slot -1 is outside"));
}

TEST(ScheduleSimulator, SkippedReverse) {
  auto actions = valid_four();
  actions.erase(actions.begin() + 6);  // "reverse 2" gone: the next reverse is of step 1
  const auto [index, message] = violation_of(4, 2, actions);
  EXPECT_EQ(index, 9);
  EXPECT_TRUE(contains(message, "'reverse step 1': skips step 2")) << message;
}

TEST(ScheduleSimulator, DoubleReverse) {
  auto actions = valid_four();
  actions.insert(actions.begin() + 7, Action::reverse(2));  // reverse 2 again
  const auto [index, message] = violation_of(4, 2, actions);
  EXPECT_EQ(index, 7);
  EXPECT_TRUE(contains(message, "step 2 is already reversed")) << message;
}

TEST(ScheduleSimulator, SlotNeverFreed) {
  auto actions = valid_four();
  actions.erase(actions.begin() + 7);  // "free slot 1" gone
  const auto [index, message] = violation_of(4, 2, actions);
  EXPECT_EQ(index, 13);
  EXPECT_TRUE(contains(message, "'done': 1 slot(s) never freed (slot 1 holds y_2)")) << message;
}

TEST(ScheduleSimulator, OtherBrokenRules) {
  // Reverse with the wrong current state (forgot to restore).
  auto no_restore = valid_four();
  no_restore.erase(no_restore.begin() + 5);
  EXPECT_TRUE(contains(violation_of(4, 2, no_restore).second,
                       "'reverse step 2': needs the current state y_2 but it is y_3"));
  // Advance backwards, in place, and past l.
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::advance(3), Action::advance(1)}).second,
                       "does not move forward from the current step 3"));
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::advance(0)}).second, "does not move forward"));
  EXPECT_TRUE(
      contains(violation_of(4, 2, {Action::advance(5)}).second, "goes past the last step l = 4"));
  // Store/restore/free naming the wrong state.
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::store(0, 1)}).second,
                       "names y_1 but the current state is y_0"));
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::store(0, 0), Action::restore(0, 3)}).second,
                       "names y_3 but the slot holds y_0"));
  EXPECT_TRUE(contains(violation_of(4, 2, {Action::free(1, 0)}).second, "is already empty"));
  // Done too early, and actions after done.
  EXPECT_TRUE(
      contains(violation_of(4, 2, {Action::done()}).second, "steps 0 .. 3 were never reversed"));
  ScheduleValidator validator(1, 1);
  for (const Action& a :
       {Action::store(0, 0), Action::reverse(0), Action::free(0, 0), Action::done()})
    validator.apply(a);
  EXPECT_TRUE(validator.finished());
  EXPECT_THROW(validator.apply(Action::done()), ScheduleViolation);
  // Unknown kinds.
  EXPECT_TRUE(contains(violation_of(4, 2, {Action{static_cast<ActionKind>(9), 0, 0}}).second,
                       "unknown action kind 9"));
  // A stream that never ends.
  std::vector<Action> forever = {Action::store(0, 0)};
  for (int i = 0; i < 200; ++i) forever.push_back(Action::restore(0, 0));
  const auto [index, message] = violation_of(4, 2, forever, SimulatorOptions{100});
  EXPECT_EQ(index, 100);
  EXPECT_TRUE(contains(message, "no done after 100 actions")) << message;
  EXPECT_TRUE(contains(violation_of(4, 2, forever).second, "no done after"));  // automatic bound
}

TEST(ScheduleSimulator, ViolationsAreInvalidArguments) {
  ListSchedule broken(2, 1, {Action::reverse(1)});
  EXPECT_THROW(simulate(broken), InvalidArgument);
  EXPECT_THROW(simulate(broken), Error);
  try {
    simulate(broken);
  } catch (const ScheduleViolation& e) {
    EXPECT_EQ(e.action(), Action::reverse(1));
    EXPECT_EQ(e.action_index(), 0);
  }
}

TEST(ScheduleSimulator, RefusesBadSetUp) {
  EXPECT_THROW(ScheduleValidator(0, 1), InvalidArgument);
  EXPECT_THROW(ScheduleValidator(5, 0), InvalidArgument);
  ListSchedule none(0, 1, {});
  EXPECT_THROW(simulate(none), InvalidArgument);
  RevolveSchedule fine(10, 2);
  EXPECT_THROW(simulate(fine, SimulatorOptions{-1}), InvalidArgument);
}

TEST(ScheduleSimulator, CountersRefuseToWrap) {
  const Index l = std::numeric_limits<Index>::max();
  ScheduleValidator validator(l, 1);
  validator.apply(Action::store(0, 0));
  validator.apply(Action::advance(l - 1));
  validator.apply(Action::restore(0, 0));
  EXPECT_THROW(validator.apply(Action::advance(l - 2)), InvalidArgument);
}

TEST(CostModel, PredictsTimeRelativeToAForwardRun) {
  StoreAllSchedule store_all(100);
  const ScheduleCost all = simulate(store_all);
  // 99 advances + 100 reverses·(1 + 1) = 299 step times over 100.
  EXPECT_DOUBLE_EQ(predicted_time_ratio(all), 2.99);
  EXPECT_DOUBLE_EQ(predicted_time_ratio(all, {.step_time = 3.0, .adjoint_cost_factor = 2.0}),
                   (99.0 + 300.0) / 100.0);
  EXPECT_DOUBLE_EQ(predicted_time(all, {.step_time = 2.0}), 2.0 * 299.0);
  // Snapshot I/O: 100 writes and 99 reads.
  EXPECT_DOUBLE_EQ(predicted_time(all, {.write_time = 0.5, .read_time = 0.25}),
                   299.0 + 50.0 + 24.75);

  RevolveSchedule revolve(1000, 10);
  const ScheduleCost cost = simulate(revolve);
  EXPECT_DOUBLE_EQ(predicted_time_ratio(cost, {.adjoint_cost_factor = 0.0}),
                   (3636.0 + 1000.0) / 1000.0);  // = revolve_recompute_ratio(1000, 10)

  EXPECT_THROW(predicted_time(all, {.step_time = 0.0}), InvalidArgument);
  EXPECT_THROW(predicted_time(all, {.adjoint_cost_factor = -1.0}), InvalidArgument);
  EXPECT_THROW(predicted_time(all, {.read_time = std::numeric_limits<double>::quiet_NaN()}),
               InvalidArgument);
  try {
    CostModel{.write_time = -2.0}.validate();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "write_time = -2 must be finite and >= 0")) << e.what();
  }
  EXPECT_THROW(predicted_time_ratio(ScheduleCost{}), InvalidArgument);
}

}  // namespace
}  // namespace rwd
