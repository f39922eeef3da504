// src/cli/online_plan.hpp — `rewind plan --online --steps L --snapshots C [--json]`: what the
// online schedule (rwd::OnlineSchedule, for runs whose length is known only when they stop)
// costs for a run that happens to end at L, against offline revolve's minimum p(L, C).
//
//   rwd::cli::OnlinePlan plan = rwd::cli::plan_online(flags, other_flags);  // refuses the rest
//   rwd::cli::print_online_plan(std::cout, plan);   // or online_plan_json(plan).dump(2)
//
// The run is simulated action by action (rwd::simulate_online), so the counts are exact; the
// region says which guarantee applies (rewind/schedule/online_placement.hpp): l ≤ β(c, 2),
// β(c, 2) < l ≤ β(c, 3), or beyond, with β(c, r) = C(c + r, c).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "checkpoint_flags.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd::cli {

struct OnlinePlan {
  std::string name;           // "online(c = 20)"
  ScheduleCost cost;          // of the validated action stream
  Index offline_advances;     // p(l, c), revolve's minimum
  Index offline_repetitions;  // r(l, c)
  Index beta2;                // β(c, 2)
  Index beta3;                // β(c, 3)
  std::string region;         // "r <= 2", "r = 3" or "r > 3"
  double adjoint_cost = kDefaultAdjointCost;
};

// Checks that only --steps, --snapshots, --json and --adjoint-cost were given (plus
// `--schedule revolve`): `other_flags` names the plan-only flags given besides (e.g.
// "--state-bytes"), refused too. Then simulates. Throws InvalidArgument naming the flag.
OnlinePlan plan_online(const CheckpointFlags& flags, const std::vector<std::string>& other_flags);

void print_online_plan(std::ostream& out, const OnlinePlan& plan);
nlohmann::ordered_json online_plan_json(const OnlinePlan& plan);

}  // namespace rwd::cli
