// StageAwareSchedule and StoreAllStagesSchedule: valid in the simulator, with the counts of the
// Zhang–Constantinescu dynamic program (written out again here, as recursions in the paper's
// P/Q form, independently of the schedule's tables), optimal against an exhaustive search over
// action sequences, and the simulator's rules for stage snapshots.
#include "rewind/schedule/stage_aware_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/store_all_stages_schedule.hpp"

namespace rwd {
namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max() / 8;

// The paper's recurrence, extra forward evaluations for m steps and s units, u units per stage
// checkpoint. P: the last checkpoint is the solution at the segment's start; Q: it is the stages
// of the segment's first step (the current solution is the one after that step, not stored).
class PaperRecurrence {
 public:
  PaperRecurrence(int u, bool published) : u_(u), published_(published) {}

  std::int64_t total(Index m, int s) { return std::min(P(s, m), s >= u_ ? Q(s, m) : kNever); }

  std::int64_t P(int s, Index m) {
    if (s < 1) return kNever;
    if (m <= 1) return 0;
    if (s == 1) return m * (m - 1) / 2;
    const auto key = std::make_tuple(0, s, m);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::int64_t best = kNever;
    if (published_) {
      // As the published library fills it: the two-step case and a shortcut first, the solution
      // split for 1 ≤ k ≤ m − 2, the stage split for 2 ≤ k ≤ m − 1 where stages pay off.
      if (m == 2) {
        best = s >= u_ + 1 ? 0 : 1;
      } else if (s >= (m - 1) * (u_ + 1)) {
        best = 0;
      } else {
        if (s - 1 >= u_)
          for (Index k = 2; k <= m - 1; ++k)
            if (Q(s - 1, m - k + 1) < P(s - 1, m - k + 1))
              best = std::min(best, (k - 1) + P(s, k - 1) + Q(s - 1, m - k + 1));
        for (Index k = 1; k <= m - 2; ++k) best = std::min(best, k + P(s, k) + P(s - 1, m - k));
      }
    } else {
      best = (m - 1) + P(s, m - 1);
      for (Index k = 1; k <= m - 2; ++k) best = std::min(best, k + P(s, k) + P(s - 1, m - k));
      if (s - 1 >= u_)
        for (Index k = 1; k <= m - 1; ++k)
          best = std::min(best, (k - 1) + P(s, k - 1) + Q(s - 1, m - k + 1));
      // Where y_a is used for the last time, its unit can hold the stages of step a instead.
      best = std::min(best, Q(s, m));
    }
    memo_[key] = best;
    return best;
  }

  std::int64_t Q(int s, Index m) {
    if (s < u_) return kNever;
    if (m <= 2) return 0;
    const auto key = std::make_tuple(1, s, m);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::int64_t best = kNever;
    if (s > u_) best = std::min(P(s - u_, m - 1), Q(s - u_, m - 1));
    memo_[key] = best;
    return best;
  }

 private:
  int u_;
  bool published_;
  std::map<std::tuple<int, int, Index>, std::int64_t> memo_;
};

// The fewest forward evaluations of any action sequence that reverses l steps in c units: a 0–1
// breadth-first search over (current step, adjoint step, snapshots held), every rule of
// rewind/schedule/action.hpp, one step at a time.
std::int64_t exhaustive_minimum(int l, int c, int u) {
  struct State {
    int current, adjoint;
    std::uint32_t states, stages;  // bit n: y_n held / the stages of step n held
  };
  const auto encode = [l](const State& s) {
    return ((static_cast<std::uint64_t>(s.states) << l | s.stages) * (l + 1) +
            static_cast<std::uint64_t>(s.current)) *
               (l + 1) +
           static_cast<std::uint64_t>(s.adjoint);
  };
  const auto units = [u](const State& s) {
    return __builtin_popcount(s.states) + u * __builtin_popcount(s.stages);
  };
  std::map<std::uint64_t, std::int64_t> best;
  std::deque<std::pair<State, std::int64_t>> queue;
  const auto relax = [&](const State& s, std::int64_t cost, bool front) {
    const auto key = encode(s);
    const auto it = best.find(key);
    if (it != best.end() && it->second <= cost) return;
    best[key] = cost;
    if (front)
      queue.emplace_front(s, cost);
    else
      queue.emplace_back(s, cost);
  };
  relax({0, l, 0, 0}, 0, true);
  while (!queue.empty()) {
    const auto [s, cost] = queue.front();
    queue.pop_front();
    if (best[encode(s)] < cost) continue;
    if (s.adjoint == 0) return cost;
    const int n = s.current;
    if (n < l) {
      relax({n + 1, s.adjoint, s.states, s.stages}, cost + 1, false);  // one step forward
      if (!(s.states >> n & 1u) && units(s) + 1 <= c)
        relax({n, s.adjoint, s.states | 1u << n, s.stages}, cost, true);  // store y_n
      if (!(s.stages >> n & 1u) && units(s) + u <= c)
        relax({n + 1, s.adjoint, s.states, s.stages | 1u << n}, cost + 1, false);  // its stages
    }
    for (int k = 0; k < l; ++k) {
      if (s.states >> k & 1u) {
        relax({k, s.adjoint, s.states, s.stages}, cost, true);               // restore y_k
        relax({n, s.adjoint, s.states & ~(1u << k), s.stages}, cost, true);  // free it
      }
      if (s.stages >> k & 1u) relax({n, s.adjoint, s.states, s.stages & ~(1u << k)}, cost, true);
    }
    const int r = s.adjoint - 1;
    if (n == r) relax({n, r, s.states, s.stages}, cost + 1, false);         // reverse, re-running r
    if (s.stages >> r & 1u) relax({n, r, s.states, s.stages}, cost, true);  // from its stages
  }
  return kNever;
}

TEST(StageAwareSchedule, MatchesTheRecurrenceForEveryCase) {
  for (const int u : {2, 4}) {
    PaperRecurrence full(u, /*published=*/false), published(u, /*published=*/true);
    int better_than_published = 0;
    for (Index l = 1; l <= 200; ++l)
      for (int c = 1; c <= 50; ++c) {
        StageAwareSchedule schedule(l, c, u);
        const ScheduleCost cost = simulate(schedule);
        const Index extra = cost.forward_evaluations() - l;
        ASSERT_EQ(extra, schedule.extra_evaluations()) << "l = " << l << ", c = " << c;
        ASSERT_EQ(extra, full.total(l, c)) << "l = " << l << ", c = " << c << ", u = " << u;
        const std::int64_t as_published = published.total(l, c);
        ASSERT_LE(extra, as_published) << "l = " << l << ", c = " << c << ", u = " << u;
        if (extra < as_published) ++better_than_published;
        ASSERT_LE(cost.peak_slots, c);
        ASSERT_EQ(cost.reverses, l);
        // Stage snapshots need u units: below that, revolve exactly.
        if (c < u) {
          ASSERT_EQ(extra, revolve_advances(l, c)) << "l = " << l << ", c = " << c;
        }
        ASSERT_LE(extra, revolve_advances(l, c));
      }
    std::cout << "u = " << u << ": " << better_than_published
              << " of 10000 cases below the published recurrence's count\n";
  }
}

// The same recurrence filled bottom-up, every split scanned (the schedule scans only those its
// lower bounds cannot rule out): S[c][j] for every c ≤ units, j ≤ l.
std::vector<std::vector<std::int64_t>> full_scan(Index l, int units, int u) {
  std::vector<std::vector<std::int64_t>> S(units + 1, std::vector<std::int64_t>(l + 1, kNever));
  std::vector<std::vector<std::int64_t>> T = S;
  for (int c = 1; c <= units; ++c) {
    if (c >= u)
      for (Index j = 0; j <= l; ++j)
        T[c][j] = j <= 2 ? 0
                         : std::min(c - u >= 1 ? S[c - u][j - 1] : kNever,
                                    c - u >= u ? T[c - u][j - 1] : kNever);
    S[c][0] = S[c][1] = 0;
    for (Index j = 2; j <= l; ++j) {
      std::int64_t best = (j - 1) + S[c][j - 1];
      for (Index k = 1; c >= 2 && k <= j - 2; ++k)
        best = std::min(best, k + S[c][k] + S[c - 1][j - k]);
      for (Index k = 2; c - 1 >= u && k <= j - 1; ++k)
        best = std::min(best, (k - 1) + S[c][k - 1] + T[c - 1][j - k + 1]);
      if (c >= u) best = std::min(best, T[c][j]);
      S[c][j] = best;
    }
  }
  return S;
}

TEST(StageAwareSchedule, MatchesAScanOfEverySplitUpToThreeThousandSteps) {
  constexpr Index kSteps = 3000;
  constexpr int kUnits = 24;
  for (const int u : {2, 3, 5}) {
    const auto S = full_scan(kSteps, kUnits, u);
    for (Index l = 2; l <= kSteps; l += l < 200 ? 7 : 331)
      for (int c = 1; c <= kUnits; ++c) {
        StageAwareSchedule schedule(l, c, u);
        ASSERT_EQ(schedule.extra_evaluations(), S[c][l])
            << "l = " << l << ", c = " << c << ", u = " << u;
        if (c % 5 == 0 || c == 1) {  // and the actions reach that count
          const ScheduleCost cost = simulate(schedule);
          ASSERT_EQ(cost.forward_evaluations() - l, S[c][l]);
          ASSERT_LE(cost.peak_slots, c);
        }
      }
    const StageAwareSchedule last(kSteps, kUnits, u);
    EXPECT_EQ(last.extra_evaluations(), S[kUnits][kSteps]) << "u = " << u;
  }
}

TEST(StageAwareSchedule, OptimalAgainstAnExhaustiveSearch) {
  for (const int u : {1, 2, 3})
    for (int l = 1; l <= 6; ++l)
      for (int c = 1; c <= 9; ++c) {
        StageAwareSchedule schedule(l, c, u);
        EXPECT_EQ(simulate(schedule).forward_evaluations(), exhaustive_minimum(l, c, u))
            << "l = " << l << ", c = " << c << ", u = " << u;
      }
}

TEST(StageAwareSchedule, ExactStreamForThreeSteps) {
  // c = 2·2: the stages of steps 0 and 1 (y_0 is never stored); step 2 is reversed from y_2.
  StageAwareSchedule schedule(3, 4, 2);
  const std::vector<Action> expected = {
      Action::store_stages(0, 0), Action::store_stages(2, 1),
      Action::reverse(2),         Action::reverse_from_stages(1, 2),
      Action::free(2, 1),         Action::reverse_from_stages(0, 0),
      Action::free(0, 0),         Action::done()};
  for (const Action& a : expected) EXPECT_EQ(schedule.next().to_string(), a.to_string());
  EXPECT_EQ(schedule.extra_evaluations(), 0);
}

TEST(StageAwareSchedule, ClonesAndResetsReplayTheSameStream) {
  StageAwareSchedule schedule(500, 12, 4);
  std::vector<Action> first;
  for (Action a = schedule.next(); a.kind != ActionKind::done; a = schedule.next())
    first.push_back(a);
  EXPECT_LT(static_cast<Index>(first.size()), 8 * 500);  // O(1) actions per step
  const auto copy = schedule.clone();
  schedule.reset();
  for (const Action& a : first) {
    EXPECT_EQ(schedule.next(), a);
    EXPECT_EQ(copy->next(), a);
  }
  EXPECT_EQ(copy->next(), Action::done());
}

TEST(StageAwareSchedule, PlansTenThousandSteps) {
  StageAwareSchedule schedule(10000, 20, 4);
  const ScheduleCost cost = simulate(schedule);
  EXPECT_EQ(cost.forward_evaluations() - 10000, schedule.extra_evaluations());
  EXPECT_LT(schedule.extra_evaluations(), revolve_advances(10000, 20));
  EXPECT_GT(cost.stage_stores, 0);
}

TEST(StageAwareSchedule, PlansAHundredThousandSteps) {
  ASSERT_TRUE(stage_aware_plannable(100000, 20, 4));
  StageAwareSchedule schedule(100000, 20, 4);
  const ScheduleCost cost = simulate(schedule);
  EXPECT_EQ(cost.forward_evaluations() - 100000, schedule.extra_evaluations());
  EXPECT_LT(schedule.extra_evaluations(), revolve_advances(100000, 20));
  EXPECT_LE(cost.peak_slots, 20);
}

TEST(StageAwareSchedule, RefusesBadArguments) {
  EXPECT_THROW(StageAwareSchedule(0, 4, 2), InvalidArgument);
  EXPECT_THROW(StageAwareSchedule(10, 0, 2), InvalidArgument);
  EXPECT_THROW(StageAwareSchedule(10, 4, 0), InvalidArgument);
  const auto refused = [](Index l, int c, int u, const std::string& says) {
    EXPECT_FALSE(stage_aware_plannable(l, c, u)) << l << " " << c << " " << u;
    try {
      StageAwareSchedule(l, c, u);
      ADD_FAILURE() << "planned l = " << l << ", c = " << c << ", u = " << u;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(kStageAwareMaxSteps + 1, 4, 2, "use revolve");
  // 1001 × 100001 entries: above the table's limit, refused before any is filled.
  refused(100000, 1000, 4, "above its limit of 33554432");
  // One unit recomputes l(l − 1)/2 steps: 2^29 or more does not fit the tables' counts.
  refused(40000, 1, 4, "2^29 steps or more");
  EXPECT_TRUE(stage_aware_plannable(32768, 1, 4));
  EXPECT_EQ(StageAwareSchedule(32768, 1, 4).extra_evaluations(), Index{32768} * 32767 / 2);
}

TEST(StoreAllStagesSchedule, RecomputesNothing) {
  for (const int u : {1, 2, 4})
    for (Index l = 1; l <= 100; ++l) {
      StoreAllStagesSchedule schedule(l, u);
      const ScheduleCost cost = simulate(schedule);
      EXPECT_EQ(cost.forward_evaluations(), l);
      EXPECT_EQ(cost.stage_stores, l);
      EXPECT_EQ(cost.stage_reverses, l);
      EXPECT_EQ(cost.stores, 0);
      EXPECT_EQ(cost.restores, 0);
      EXPECT_EQ(cost.peak_slots, l * u);
      EXPECT_EQ(cost.memory_slots_used, l * u);
    }
  EXPECT_THROW(StoreAllStagesSchedule(0, 4), InvalidArgument);
  EXPECT_THROW(StoreAllStagesSchedule(10, 0), InvalidArgument);
  EXPECT_THROW(StoreAllStagesSchedule(Index{std::numeric_limits<int>::max()}, 2), InvalidArgument);
}

// The simulator's rules for stage snapshots, each broken once.
void expect_violation(std::vector<Action> actions, const std::string& says, int units = 2) {
  ScheduleValidator v(3, 6, "test");
  v.set_stage_units(units);
  try {
    for (const Action& a : actions) v.apply(a);
    ADD_FAILURE() << "accepted: " << actions.back().to_string();
  } catch (const ScheduleViolation& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(StageSnapshotRules, EachRuleRefuses) {
  expect_violation({Action::store_stages(0, 0)}, "no stage snapshots", 0);
  expect_violation({Action::store_stages(5, 0)}, "beyond the budget");
  expect_violation({Action::store(1, 0), Action::store_stages(0, 0)}, "occupied");
  expect_violation({Action::store_stages(0, 1)}, "current state is y_0");
  expect_violation({Action::advance(3), Action::store_stages(0, 3)}, "past the last step");
  expect_violation({Action::store_stages(0, 0), Action::restore(0, 0)}, "not a state");
  expect_violation({Action::store_stages(0, 0), Action::reverse_from_stages(2, 0)},
                   "holds those of step 0");
  expect_violation({Action::store_stages(0, 0), Action::reverse_from_stages(0, 1)},
                   "does not begin a stage snapshot");
  expect_violation({Action::store_stages(0, 0), Action::reverse_from_stages(0, 0)}, "skips step 2");
  expect_violation({Action::store_stages(0, 0), Action::free(1, 0)}, "free it by its first slot");
  expect_violation({Action::store_stages(0, 0), Action::done()}, "never");
}

TEST(StageSnapshotRules, ALegalStreamCountsEverything) {
  ScheduleValidator v(3, 6, "test");
  v.set_stage_units(2);
  for (const Action& a :
       {Action::store(0, 0), Action::store_stages(1, 0), Action::store_stages(3, 1),
        Action::reverse(2), Action::reverse_from_stages(1, 3), Action::free(3, 1),
        Action::reverse_from_stages(0, 1), Action::free(1, 0), Action::free(0, 0), Action::done()})
    v.apply(a);
  const ScheduleCost& cost = v.cost();
  EXPECT_EQ(cost.advances, 2);
  EXPECT_EQ(cost.stage_stores, 2);
  EXPECT_EQ(cost.stage_reverses, 2);
  EXPECT_EQ(cost.forward_evaluations(), 3);
  EXPECT_EQ(cost.peak_slots, 5);
  EXPECT_EQ(cost.memory_slots_used, 5);
  EXPECT_EQ(Action::reverse_from_stages(1, 3).to_string(),
            "reverse step 1 with the stages in slot 3");
  EXPECT_EQ(Action::store_stages(3, 1).to_string(), "store stages of step 1 in slot 3");
  // Predicted time: a reverse from stages runs the adjoint part only.
  CostModel model{.step_time = 1.0, .adjoint_cost_factor = 2.0};
  EXPECT_DOUBLE_EQ(predicted_time(cost, model), 2.0 + 3.0 * 3.0 - 2.0);
  // Copies. The state snapshot is one write. A stage snapshot is one write (the driver's stage
  // values go straight into their slots) and nothing to read back — or, when the stage values
  // go through copies, u writes and u reads.
  ASSERT_EQ(cost.stores, 1);
  ASSERT_EQ(cost.restores, 0);
  model.write_time = 0.5;
  model.read_time = 0.25;
  EXPECT_DOUBLE_EQ(predicted_time(cost, model), 9.0 + 0.5 * (1 + 2));
  model.stage_values_copied = true;
  EXPECT_DOUBLE_EQ(predicted_time(cost, model), 9.0 + 0.5 * (1 + 2 * 2) + 0.25 * (2 * 2));
}

}  // namespace
}  // namespace rwd
