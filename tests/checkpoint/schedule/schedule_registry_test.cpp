// The schedule registry: a family a user writes (here a snapshot every k-th step, each step of a
// segment replayed from the segment's snapshot) is registered, found by name and planned through
// plan_checkpoints like rewind's own, with counts equal to rwd::simulate's and to the family's
// closed forms; an unknown name is refused with a "did you mean" that names the registered ones.
#include "rewind/schedule/schedule_registry.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

// y_0, y_k, y_2k, … kept in slots 0, 1, 2, …; step j is reversed after restoring its segment's
// snapshot and advancing from it to j (the first reverse, of l − 1, needs neither).
class EveryKthStepSchedule final : public Schedule {
 public:
  EveryKthStepSchedule(Index steps, Index interval)
      : steps_(steps), interval_(interval), segments_((steps - 1) / interval + 1) {
    build();
  }

  Action next() override { return at_ < actions_.size() ? actions_[at_++] : Action::done(); }
  Index steps() const override { return steps_; }
  int slots() const override { return static_cast<int>(segments_); }
  std::string name() const override { return "every-kth(k = " + std::to_string(interval_) + ")"; }
  void reset() override { at_ = 0; }
  std::unique_ptr<Schedule> clone() const override {
    return std::make_unique<EveryKthStepSchedule>(steps_, interval_);
  }

 private:
  void build() {
    for (Index s = 0; s < segments_; ++s) {
      if (s > 0) actions_.push_back(Action::advance(s * interval_));
      actions_.push_back(Action::store(static_cast<int>(s), s * interval_));
    }
    Index current = (segments_ - 1) * interval_;
    if (current < steps_ - 1) actions_.push_back(Action::advance(current = steps_ - 1));
    for (Index j = steps_ - 1; j >= 0; --j) {
      const Index segment = j / interval_;
      const Index start = segment * interval_;
      if (current != j) {
        actions_.push_back(Action::restore(static_cast<int>(segment), start));
        if (j > start) actions_.push_back(Action::advance(j));
      }
      actions_.push_back(Action::reverse(j));
      current = j;
      if (j == start) actions_.push_back(Action::free(static_cast<int>(segment), start));
    }
    actions_.push_back(Action::done());
  }

  Index steps_, interval_, segments_;
  std::vector<Action> actions_;
  std::size_t at_ = 0;
};

// The family: its interval is the request's; its closed forms count what the schedule does.
class EveryKthStepFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "every-kth"; }
  std::vector<std::string> aliases() const override { return {"kth"}; }
  std::string description() const override { return "a snapshot every k-th step"; }
  std::vector<PlanField> fields() const override { return {PlanField::interval}; }
  void validate(const PlanRequest& request) const override {
    if (!request.interval)
      throw InvalidPlanRequest(PlanField::interval, " is missing: every-kth needs k");
  }
  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    const Index l = plan.steps;
    const Index k = std::min(*request.interval, l);
    plan.interval = k;
    plan.snapshots = (l - 1) / k + 1;
    // The first sweep's l − 1, and j mod k to reach each step j < l − 1 again from its segment.
    Index replayed = 0;
    for (Index j = 0; j + 1 < l; ++j) replayed += j % k;
    plan.advances = (l - 1) + replayed;
    plan.stores = plan.snapshots;
    plan.peak_slots = plan.snapshots;
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<EveryKthStepSchedule>(plan.steps, plan.interval);
  }
  std::vector<PlanFact> facts(const CheckpointPlan& plan) const override {
    return {{"interval", plan.interval}};
  }
};

const ScheduleFamily& every_kth_family() {
  static const ScheduleFamily* registered = [] {
    register_schedule_family(std::make_shared<EveryKthStepFamily>());
    return &find_schedule_family("every-kth");
  }();
  return *registered;
}

TEST(ScheduleRegistry, PlansAUserFamilyWithExactCounts) {
  const ScheduleFamily& family = every_kth_family();
  EXPECT_EQ(&find_schedule_family("KTH"), &family);  // an alias, in any case
  PlanRequest request;
  request.family = &family;
  for (Index l : {1, 2, 7, 10, 11, 100, 1001})
    for (Index k : {1, 3, 10, 50}) {
      request.interval = k;
      const CheckpointPlan plan = plan_checkpoints(request, l);
      EveryKthStepSchedule schedule(l, std::min(k, l));
      const ScheduleCost cost = simulate(schedule);
      ASSERT_TRUE(plan.simulated);
      EXPECT_EQ(plan.family, &family);
      EXPECT_EQ(plan.name, schedule.name());
      EXPECT_EQ(plan.advances, cost.advances) << l << " " << k;
      EXPECT_EQ(*plan.stores, cost.stores) << l << " " << k;
      EXPECT_EQ(plan.restores, cost.restores) << l << " " << k;
      EXPECT_EQ(plan.reverses, l);
      EXPECT_EQ(plan.peak_slots, cost.peak_slots) << l << " " << k;
      // The family's closed forms agree with the simulation (l ≥ 2: l − 1 restores).
      PlanRequest same = request;
      CheckpointPlan closed;
      closed.steps = l;
      family.closed_forms(same, closed);
      EXPECT_EQ(closed.advances, cost.advances) << l << " " << k;
      EXPECT_EQ(*closed.stores, cost.stores) << l << " " << k;
      EXPECT_EQ(closed.peak_slots, cost.peak_slots) << l << " " << k;
      ASSERT_EQ(plan.levels.size(), 1u);
      EXPECT_EQ(plan.levels[0].kind, LevelKind::memory);
      EXPECT_EQ(plan.levels[0].slots_used, (l - 1) / std::min(k, l) + 1);
      EXPECT_EQ(plan_fact(plan, "interval"), std::min(k, l));
    }
  // k = 10 over 100 steps: 10 snapshots, 99 + 10·(0 + 1 + … + 9) − 9 advances (step 99 is not
  // reached again).
  request.interval = 10;
  EXPECT_EQ(plan_checkpoints(request, 100).advances, 99 + 10 * 45 - 9);
}

TEST(ScheduleRegistry, AUserFamilysRulesAndFieldsAreChecked) {
  PlanRequest request;
  request.family = &every_kth_family();
  expect_message(error_message<InvalidPlanRequest>([&] { request.validate(); }),
                 "interval is missing: every-kth needs k");
  request.interval = 4;
  request.budget = 3;  // every-kth takes no budget
  expect_message(error_message<InvalidPlanRequest>([&] { request.validate(); }),
                 "budget does not apply to the every-kth schedule (it applies to revolve, "
                 "uniform or store-all)");
  // Rewind's own families now name it among those taking an interval.
  PlanRequest revolve = PlanRequest::revolve(3);
  revolve.interval = 4;
  expect_message(error_message<InvalidPlanRequest>([&] { revolve.validate(); }),
                 "(it applies to uniform or every-kth)");
  EXPECT_NE(schedule_family_names().find("every-kth"), std::string::npos);
}

TEST(ScheduleRegistry, RefusesAnUnknownNameNamingTheRegisteredOnes) {
  const std::string near = error_message<InvalidArgument>([] { find_schedule_family("revolv"); });
  expect_message(near, "'revolv' is not a schedule; did you mean revolve?");
  expect_message(
      near, "(registered: revolve, uniform, store-all, two-level, three-level, custom, online");
  const std::string far = error_message<InvalidArgument>([] { find_schedule_family("greedy"); });
  expect_message(far, "'greedy' is not a schedule (registered: revolve, uniform");
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
  EXPECT_EQ(schedule_family_named("greedy"), nullptr);
}

TEST(ScheduleRegistry, FindsRewindsOwnFamiliesByNameAndAlias) {
  EXPECT_EQ(&find_schedule_family("revolve"), &revolve_family());
  EXPECT_EQ(&find_schedule_family("binomial"), &revolve_family());
  EXPECT_EQ(&find_schedule_family("Store_All"), &store_all_family());
  EXPECT_EQ(&find_schedule_family("storeall"), &store_all_family());
  EXPECT_EQ(&find_schedule_family("multi-level"), &two_level_family());
  EXPECT_EQ(&find_schedule_family("three_level"), &three_level_family());
  EXPECT_EQ(&find_schedule_family("online"), &online_family());
  EXPECT_EQ(
      schedule_family_names(true).rfind("revolve, uniform, store-all, two-level, three-level", 0),
      0u);
  EXPECT_EQ(schedule_family_names(true).find("custom"), std::string::npos);
  for (const ScheduleFamily* family : schedule_families())
    EXPECT_FALSE(family->description().empty()) << family->name();
}

TEST(ScheduleRegistry, RefusesADuplicateOrMalformedName) {
  class Named final : public ScheduleFamily {
   public:
    explicit Named(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    std::string description() const override { return "a test family"; }
    std::vector<PlanField> fields() const override { return {}; }
    void closed_forms(const PlanRequest&, CheckpointPlan&) const override {}
    std::unique_ptr<Schedule> schedule(const PlanRequest&, const CheckpointPlan&) const override {
      return nullptr;
    }

   private:
    std::string name_;
  };
  expect_message(error_message<InvalidArgument>(
                     [] { register_schedule_family(std::make_shared<Named>("binomial")); }),
                 "'binomial' is already a name of the revolve schedule");
  expect_message(error_message<InvalidArgument>(
                     [] { register_schedule_family(std::make_shared<Named>("Two Words")); }),
                 "name 'Two Words' must be lower-case letters, digits and '-'");
  expect_message(error_message<InvalidArgument>([] { register_schedule_family(nullptr); }),
                 "the family is null");
  // A family that makes no schedule is refused by plan_checkpoints, naming it.
  static const Named empty("empty-family");
  PlanRequest request;
  request.family = &empty;
  expect_message(error_message<InvalidArgument>([&] { plan_checkpoints(request, 10); }),
                 "the empty-family family made no schedule of 10 steps");
}

}  // namespace
}  // namespace rwd
