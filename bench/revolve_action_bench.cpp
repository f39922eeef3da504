// bench/revolve_action_bench.cpp — what one action of the revolve schedule costs to generate.
//
//   cmake --build build-bench --target revolve_action_bench
//   build-bench/bench/revolve_action_bench
//
// The schedule is pure integer work that runs once per action of a gradient computation; it must
// stay negligible next to a time step (goal: under 50 ns per action, O(1) amortised, for any
// horizon). Each iteration resets a RevolveSchedule for l = 10^7 steps and pulls its whole action
// stream through next() until done (≈ 4·10^7 actions), for c ∈ {10, 20, 50, 100} snapshots:
//
//   RevolveNext/c:C         next() called on the concrete (final) class: a direct call, not
//                           inlined (next() is compiled in checkpoint/src/revolve_schedule.cpp);
//   RevolveNextVirtual/c:C  next() through a Schedule* that the compiler cannot see through:
//                           what the adjoint driver pays (it holds a std::unique_ptr<Schedule>).
//
// Counters:
//   ns/action      wall time per action, steady_clock around each whole stream (the main
//                  figure; items_per_second is its inverse up to the timer)
//   actions/step   actions per step of the horizon (advance, store, restore, reverse, free)
//   advances/step  p(l, c) / l, the recomputation of the schedule (forward runs beyond the first)
//   optimal        1 when the advances equal the Griewank–Walther minimum revolve_advances(l, c)
//   r              the repetition number r(l, c)
//
// The loop consumes every action (sums of steps and kinds) so that no part of next() can be
// dropped by the optimiser. Construction (finding r, O(min(c, r)·log l)) is outside the timing.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <utility>

#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"

namespace {

using rwd::Index;

constexpr Index kSteps = 10'000'000;

struct Stream {
  Index actions = 0;
  Index advances = 0;
  std::uint64_t checksum = 0;
};

// Pulls one whole action stream. S is RevolveSchedule (direct calls) or Schedule (virtual).
template <class S>
Stream drain(S& schedule) {
  Stream s;
  Index current = 0;
  for (;;) {
    const rwd::Action a = schedule.next();
    ++s.actions;
    s.checksum += static_cast<std::uint64_t>(a.step) * 3u + static_cast<std::uint64_t>(a.kind) +
                  static_cast<std::uint64_t>(a.slot + 1);
    switch (a.kind) {
      case rwd::ActionKind::advance:
        s.advances += a.step - current;
        current = a.step;
        break;
      case rwd::ActionKind::restore:
        current = a.step;
        break;
      case rwd::ActionKind::done:
        return s;
      default:
        break;
    }
  }
}

template <bool kVirtual>
void revolve_next(benchmark::State& state) {
  const int snapshots = static_cast<int>(state.range(0));
  rwd::RevolveSchedule schedule(kSteps, snapshots);
  rwd::Schedule* as_base = &schedule;
  benchmark::DoNotOptimize(as_base);  // the virtual variant cannot devirtualise through this
  Stream last;
  double ns = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    schedule.reset();
    last = kVirtual ? drain(*as_base) : drain(schedule);
    benchmark::DoNotOptimize(last.checksum);
    ns +=
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  }
  const double actions = static_cast<double>(last.actions);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * last.actions);
  state.counters["ns/action"] = ns / (static_cast<double>(state.iterations()) * actions);
  state.counters["actions/step"] = actions / static_cast<double>(kSteps);
  state.counters["advances/step"] =
      static_cast<double>(last.advances) / static_cast<double>(kSteps);
  state.counters["optimal"] = last.advances == rwd::revolve_advances(kSteps, snapshots) ? 1.0 : 0.0;
  state.counters["r"] = static_cast<double>(schedule.repetitions());
}

void register_all() {
  for (auto [name, fn] : {std::pair{"RevolveNext", &revolve_next<false>},
                          std::pair{"RevolveNextVirtual", &revolve_next<true>}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgName("c")
        ->Arg(10)
        ->Arg(20)
        ->Arg(50)
        ->Arg(100)
        ->Iterations(3)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("rewind_schedule",
                              "RevolveSchedule, l = 10^7, whole stream per iteration");
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
