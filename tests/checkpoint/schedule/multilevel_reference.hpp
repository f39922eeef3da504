// Reference solutions for two-level checkpointing (tests only), written independently of the
// planner in checkpoint/src/multilevel_plan.cpp:
//
//   exhaustive_two_level — Dijkstra over the full state graph of the action rules
//       (rewind/schedule/action.hpp): current step, adjoint position, and which steps are held on
//       which level. Every action sequence the schedule validator accepts is a path in it, so its
//       shortest path is the optimum over ALL schedules, recursive or not. Tiny l only (≤ ~8).
//   ReferenceTwoLevelDP — the recursive family of multilevel_schedule.hpp as a plain memoised
//       recursion, O(l²·m·d): no saturation of the slot counts, no tables shared with the planner.
//
//   rwd::CostModel costs{.disk_write_time = 2.0, .disk_read_time = 2.0};
//   rwd::test::ReferenceTwoLevelDP dp(/*max_steps=*/200, /*memory=*/2, /*disk=*/3, costs);
//   double t = dp.optimum(150);                       // least makespan of the family, l = 150
//   double u = rwd::test::exhaustive_two_level(6, 2, 3, costs);  // over all action sequences
//
// Also uniform_disk_schedule: the simple strategy (uniform disk snapshots, memory revolve inside)
// the planner must never lose to.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/types.hpp"

namespace rwd::test {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

// The cost model per operation: u_f (advance one step), u_b (reverse one step, its forward re-run
// included), and per level a write and a read.
struct OperationCosts {
  double advance, reverse, write[2], read[2];
  explicit OperationCosts(const CostModel& c)
      : advance(c.step_time),
        reverse(c.step_time * (1.0 + c.adjoint_cost_factor)),
        write{c.write_time, c.disk_write_time},
        read{c.read_time, c.disk_read_time} {}
};

// Least makespan over every valid action sequence for l steps, `memory` memory slots and `disk`
// disk slots (l ≤ 12). States: (current step, adjoint step e, held-in-memory set, held-on-disk
// set). Moves: advance to any k in (current, l]; reverse when current = e − 1; store the current
// state on a level where it is not yet held and a slot is free; restore any held state; free any
// held state (cost 0). Goal: e = 0 (freeing what is left costs nothing).
inline double exhaustive_two_level(Index steps, int memory, int disk, const CostModel& costs) {
  const OperationCosts op(costs);
  using Key = std::uint64_t;  // cur | e << 8 | mem << 16 | disk << 32
  const auto key = [](Index cur, Index e, std::uint32_t m, std::uint32_t d) {
    return static_cast<Key>(cur) | static_cast<Key>(e) << 8 | static_cast<Key>(m) << 16 |
           static_cast<Key>(d) << 32;
  };
  std::unordered_map<Key, double> dist;
  using Item = std::pair<double, Key>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  const auto relax = [&](Key k, double d) {
    const auto it = dist.find(k);
    if (it == dist.end() || d < it->second) {
      dist[k] = d;
      queue.push({d, k});
    }
  };
  relax(key(0, steps, 0, 0), 0.0);
  while (!queue.empty()) {
    const auto [d, k] = queue.top();
    queue.pop();
    if (d > dist[k]) continue;
    const Index cur = static_cast<Index>(k & 0xff);
    const Index e = static_cast<Index>(k >> 8 & 0xff);
    const auto held_m = static_cast<std::uint32_t>(k >> 16 & 0xffff);
    const auto held_d = static_cast<std::uint32_t>(k >> 32 & 0xffff);
    if (e == 0) return d;
    for (Index t = cur + 1; t <= steps; ++t)
      relax(key(t, e, held_m, held_d), d + static_cast<double>(t - cur) * op.advance);
    if (cur == e - 1) relax(key(cur, e - 1, held_m, held_d), d + op.reverse);
    const std::uint32_t bit = 1u << cur;
    if (!(held_m & bit) && std::popcount(held_m) < memory)
      relax(key(cur, e, held_m | bit, held_d), d + op.write[0]);
    if (!(held_d & bit) && std::popcount(held_d) < disk)
      relax(key(cur, e, held_m, held_d | bit), d + op.write[1]);
    for (Index t = 0; t <= steps; ++t) {
      const std::uint32_t b = 1u << t;
      if (held_m & b) {
        relax(key(t, e, held_m, held_d), d + op.read[0]);
        relax(key(cur, e, held_m & ~b, held_d), d);
      }
      if (held_d & b) {
        relax(key(t, e, held_m, held_d), d + op.read[1]);
        relax(key(cur, e, held_m, held_d & ~b), d);
      }
    }
  }
  return kNever;
}

// The recursive family: F(level, n, a, b, may_move) is the least time from "y_s current and held
// on `level`, a memory and b disk slots free besides" to "step s reversed", for n steps.
class ReferenceTwoLevelDP {
 public:
  ReferenceTwoLevelDP(Index max_steps, int memory, int disk, const CostModel& costs)
      : op_(costs),
        max_steps_(max_steps),
        memory_(memory),
        disk_(disk),
        memo_(static_cast<std::size_t>(2 * (max_steps + 1) * (memory + 1) * (disk + 1) * 2), -1.0) {
  }

  // The whole run: y_0 current and not yet stored (it must be, unless l = 1).
  double optimum(Index steps) {
    if (steps == 1) return op_.reverse;
    double best = op_.write[0] + f(0, steps, memory_ - 1, disk_, true);
    if (disk_ >= 1) best = std::min(best, op_.write[1] + f(1, steps, memory_, disk_ - 1, true));
    return best;
  }

 private:
  double f(int level, Index n, int a, int b, bool may_move) {
    if (n == 1) return op_.reverse;
    double& slot = memo_[static_cast<std::size_t>(
        (((level * (max_steps_ + 1) + n) * (memory_ + 1) + a) * (disk_ + 1) + b) * 2 + may_move)];
    if (slot >= 0.0) return slot;
    double best = kNever;
    for (Index j = 1; j < n; ++j) {
      const Index k = n - j;
      double right = op_.reverse;  // a one-step right part is reversed at once
      if (k >= 2) {
        right = kNever;
        if (a >= 1) right = std::min(right, op_.write[0] + f(0, k, a - 1, b, true));
        if (b >= 1) right = std::min(right, op_.write[1] + f(1, k, a, b - 1, true));
      }
      best = std::min(best, static_cast<double>(j) * op_.advance + right + op_.read[level] +
                                f(level, j, a, b, true));
    }
    if (may_move) {
      if (level == 0 && b >= 1) best = std::min(best, op_.write[1] + f(1, n, a + 1, b - 1, false));
      if (level == 1 && a >= 1) best = std::min(best, op_.write[0] + f(0, n, a - 1, b + 1, false));
    }
    slot = best;
    return best;
  }

  OperationCosts op_;
  Index max_steps_;
  int memory_, disk_;
  std::vector<double> memo_;
};

// A stream of actions as a Schedule with a memory/disk split.
class ActionListSchedule final : public Schedule {
 public:
  ActionListSchedule(Index steps, int slots, int memory_slots, std::vector<Action> actions)
      : steps_(steps), slots_(slots), memory_slots_(memory_slots), actions_(std::move(actions)) {}
  Action next() override {
    return position_ < actions_.size() ? actions_[position_++] : Action::done();
  }
  Index steps() const override { return steps_; }
  int slots() const override { return slots_; }
  int memory_slots() const override { return memory_slots_; }
  std::string name() const override { return "list"; }
  void reset() override { position_ = 0; }
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<ActionListSchedule>(*this);
    copy->reset();
    return copy;
  }

 private:
  Index steps_;
  int slots_, memory_slots_;
  std::vector<Action> actions_;
  std::size_t position_ = 0;
};

// The simple two-level strategy: y_0, y_k, y_2k, … on disk in the first sweep (⌈l/k⌉ ≤ d of
// them, in slots m, m + 1, …), then each interval from the last reversed by memory revolve with m
// snapshots from its disk snapshot (copied into memory slot 0 by revolve's first store).
inline ActionListSchedule uniform_disk_schedule(Index l, int m, int d, Index k) {
  const Index count = (l - 1) / k + 1;
  if (count > d) throw InvalidArgument("uniform_disk_schedule: more intervals than disk slots");
  std::vector<Action> a;
  for (Index i = 0; i < count; ++i) {
    if (i > 0) a.push_back(Action::advance(i * k));
    a.push_back(Action::store(m + static_cast<int>(i), i * k));
  }
  for (Index i = count - 1; i >= 0; --i) {
    const Index s = i * k, length = std::min(k, l - s);
    const int disk_slot = m + static_cast<int>(i);
    if (i != count - 1) a.push_back(Action::restore(disk_slot, s));
    if (length == 1) {
      a.push_back(Action::reverse(s));
    } else {
      RevolveSchedule inner(length, m);
      for (Action x = inner.next(); x.kind != ActionKind::done; x = inner.next()) {
        x.step += s;
        a.push_back(x);
      }
    }
    a.push_back(Action::free(disk_slot, s));
  }
  return ActionListSchedule(l, m + d, m, std::move(a));
}

}  // namespace rwd::test
