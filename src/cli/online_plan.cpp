// src/cli/online_plan.cpp — see online_plan.hpp.
#include "online_plan.hpp"

#include <cstdio>

#include "byte_size.hpp"
#include "rewind/error.hpp"

namespace rwd::cli {
namespace {

// The simulation runs every action (about 30 ns each, a few per step): a bound that keeps
// `rewind plan` interactive.
constexpr Index kMaxOnlineSteps = 100000000;

std::string fixed(const char* spec, double value) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

void row(std::ostream& out, const std::string& label, const std::string& value) {
  char padded[64];
  std::snprintf(padded, sizeof padded, "  %-30s", label.c_str());
  out << padded << value << "\n";
}

}  // namespace

OnlinePlan online_plan_for_flags(const CheckpointFlags& flags,
                                 const std::vector<std::string>& other_flags) {
  const auto refuse = [](const std::string& flag) {
    rwd::detail::fail<InvalidArgument>(
        flag,
        " does not apply with --online: the online schedule is binomial checkpointing "
        "(revolve) for runs of unknown length, planned from --steps L and --snapshots C "
        "only");
  };
  if (flags.schedule && *flags.schedule != "revolve") refuse("--schedule " + *flags.schedule);
  if (flags.memory) refuse("--memory");
  if (flags.interval) refuse("--interval");
  if (flags.disk) refuse("--disk");
  if (flags.ram_snapshots) refuse("--ram-snapshots");
  if (flags.disk_snapshots) refuse("--disk-snapshots");
  if (flags.disk_write_cost) refuse("--disk-write-cost");
  if (flags.disk_read_cost) refuse("--disk-read-cost");
  for (const std::string& flag : other_flags) refuse(flag);
  if (!flags.steps)
    rwd::detail::fail<InvalidArgument>(
        "--online needs --steps L, the length the run happens to end at");
  if (!flags.snapshots) rwd::detail::fail<InvalidArgument>("--online needs --snapshots C");
  const Index l = parse_count("--steps", *flags.steps);
  const Index c = parse_count("--snapshots", *flags.snapshots);
  if (l > kMaxOnlineSteps)
    rwd::detail::fail<InvalidArgument>("--steps ", l, " with --online: at most ", kMaxOnlineSteps,
                                       " (the run is simulated step by step)");
  if (c > 1000000)
    rwd::detail::fail<InvalidArgument>("--snapshots ", c, " with --online: at most 1000000");
  if (flags.adjoint_cost && !(*flags.adjoint_cost >= 0.0))
    rwd::detail::fail<InvalidArgument>("--adjoint-cost = ", *flags.adjoint_cost, " must be >= 0");

  OnlinePlan plan;
  const OnlineRule rule =
      flags.online_rule ? parse_online_rule(*flags.online_rule) : OnlineRule::least_worst_case;
  plan.comparison = compare_online_with_offline(static_cast<int>(c), l, rule);
  if (flags.adjoint_cost) plan.adjoint_cost = *flags.adjoint_cost;
  return plan;
}

void print_online_plan(std::ostream& out, const OnlinePlan& plan) {
  const OnlineComparison& online = plan.comparison;
  const ScheduleCost& cost = online.cost;
  const Index l = cost.steps;
  out << "rewind plan: " << online.name << " for a run that ends at " << l << " steps\n";
  row(out, "steps l", std::to_string(l) + " (known to the schedule only when the run stops)");
  row(out, "snapshots c", std::to_string(cost.slots) + " (the initial state's snapshot included)");
  row(out, "forward steps l + p", std::to_string(l + cost.advances));
  row(out, "recomputed steps p", std::to_string(cost.advances));
  row(out, "recompute ratio (l + p)/l", fixed("%.4f", online.recompute_ratio()));
  row(out, "offline revolve p(l, c)",
      std::to_string(online.offline_advances) +
          " (r = " + std::to_string(online.offline_repetitions) + ", l known in advance)");
  row(out, "online / offline p", fixed("%.5f", online.ratio_to_offline()));
  row(out, "stores / restores",
      std::to_string(cost.stores) + " / " + std::to_string(cost.restores));
  row(out, "peak slots", std::to_string(cost.peak_slots));
  std::string region = online_region_name(online.region);
  switch (online.region) {
    case OnlineRegion::up_to_beta2:
      region += ": l <= beta(c, 2) = " + std::to_string(online.beta2);
      break;
    case OnlineRegion::up_to_beta3:
      region += ": beta(c, 2) = " + std::to_string(online.beta2) +
                " < l <= beta(c, 3) = " + std::to_string(online.beta3);
      break;
    case OnlineRegion::beyond_beta3:
      region += ": l > beta(c, 3) = " + std::to_string(online.beta3);
      break;
  }
  row(out, "region", region);
  row(out, "predicted time",
      fixed("%.4f", online.predicted_time_ratio(plan.adjoint_cost)) +
          " forward runs (--adjoint-cost " + fixed("%g", plan.adjoint_cost) + ")");
}

nlohmann::ordered_json online_plan_json(const OnlinePlan& plan) {
  const OnlineComparison& online = plan.comparison;
  const ScheduleCost& cost = online.cost;
  const Index l = cost.steps;
  nlohmann::ordered_json j;
  j["schedule"] = online.name;
  j["online"] = true;
  j["steps"] = l;
  j["snapshots"] = cost.slots;
  j["forward_steps"] = l + cost.advances;
  j["recomputed_steps"] = cost.advances;
  j["recompute_ratio"] = online.recompute_ratio();
  j["offline_recomputed_steps"] = online.offline_advances;
  j["offline_repetitions"] = online.offline_repetitions;
  j["ratio_to_offline"] = online.ratio_to_offline();
  j["stores"] = cost.stores;
  j["restores"] = cost.restores;
  j["reverses"] = cost.reverses;
  j["peak_slots"] = cost.peak_slots;
  j["region"] = online_region_name(online.region);
  j["beta2"] = online.beta2;
  j["beta3"] = online.beta3;
  j["predicted_time_ratio"] = online.predicted_time_ratio(plan.adjoint_cost);
  return j;
}

}  // namespace rwd::cli
