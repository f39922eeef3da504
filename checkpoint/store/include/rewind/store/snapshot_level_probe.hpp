// rewind/store/snapshot_level_probe.hpp — how long a snapshot copy takes on the device and host
// levels of a three-level store, measured at start-up, and the conversion of every level's cost
// (disk included: rwd::measure_disk_costs) into forward steps for rwd::ThreeLevelSchedule.
//
//   rwd::LevelCosts levels = rwd::measure_level_costs<B>(/*state size=*/n);
//   rwd::DiskCosts disk = rwd::measure_disk_costs("/scratch", n, sizeof(rwd::Carry));
//   rwd::CostModel costs{.adjoint_cost_factor = 2.0};
//   rwd::set_level_costs(costs, /*seconds per forward step=*/step_seconds, levels, &disk);
//   driver.run(y0, theta, rwd::three_level_schedule(4, 64, 1000, costs));
//
// The copies are those a run makes, through the same stores: MemorySnapshotStore (a device-to-
// device copy for CUDA vectors) and HostSnapshotStore (pinned memory and its own stream under
// CUDA, where a write is timed until its PCIe copy has finished). Medians of `samples`. The device
// level's copies go round `slots` slots, each written once before the timing starts: with as many
// slots as a run keeps, a copy meets the caches as the run's copies do (one slot stays in the
// CPU's cache and times a copy cheaper than a run sees).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/host_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"

namespace rwd {

struct LevelCosts {
  double device_write_seconds = 0.0;  // one snapshot into the device level (median)
  double device_read_seconds = 0.0;
  double host_write_seconds = 0.0;  // one snapshot out to the host level, copy finished
  double host_read_seconds = 0.0;   // one back from it
  std::int64_t snapshot_bytes = 0;  // state values only
  double host_bytes_per_second() const {
    const double t = std::max(host_write_seconds, host_read_seconds);
    return t > 0 ? static_cast<double>(snapshot_bytes) / t : 0.0;
  }
};

template <VectorBackend B>
LevelCosts measure_level_costs(Index state_size, int samples = 5, int slots = 1) {
  if (state_size < 1)
    detail::fail<InvalidArgument>("measure_level_costs: state size ", state_size, " must be >= 1");
  if (samples < 1)
    detail::fail<InvalidArgument>("measure_level_costs: samples = ", samples, " must be >= 1");
  if (slots < 1)
    detail::fail<InvalidArgument>("measure_level_costs: slots = ", slots, " must be >= 1");
  struct Probe {
    Index step;
  };
  MemorySnapshotStore<B, Probe> device(slots, state_size);
  HostSnapshotStore<B, Probe> host(1, state_size);
  typename B::Vector y = B::zeros(state_size);
  B::fill(y, 1.0);
  std::vector<double> times[4];
  const auto timed = [](auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Probe meta{0};
  // Every device slot written first (the first write of a slot's memory also pays its page
  // faults) and kept; then each sample rewrites the slot written longest ago and reads the one
  // half the slots back, as a schedule's stores and restores meet slots written long before.
  std::vector<Index> held(static_cast<std::size_t>(slots));
  for (int slot = 0; slot < slots; ++slot) {
    held[static_cast<std::size_t>(slot)] = slot;
    device.store(slot, slot, y, meta);
  }
  for (int i = 0; i < samples; ++i) {
    const int slot = i % slots;
    const Index step = slots + i;
    device.free(slot);
    times[0].push_back(timed([&] { device.store(slot, step, y, meta); }));
    held[static_cast<std::size_t>(slot)] = step;
    const int read = (slot + slots / 2) % slots;
    times[1].push_back(
        timed([&] { device.restore(read, held[static_cast<std::size_t>(read)], y, meta); }));
    times[2].push_back(timed([&] {
      host.store(0, i, y, meta);
      host.finish();
    }));
    times[3].push_back(timed([&] {
      host.restore(0, i, y, meta);
      (void)B::dot(y, y);  // the restored state is in place (waits for an asynchronous copy)
    }));
    host.free(0);
  }
  const auto median = [](std::vector<double>& t) {
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    return t[t.size() / 2];
  };
  LevelCosts costs;
  costs.device_write_seconds = median(times[0]);
  costs.device_read_seconds = median(times[1]);
  costs.host_write_seconds = median(times[2]);
  costs.host_read_seconds = median(times[3]);
  costs.snapshot_bytes = state_size * static_cast<std::int64_t>(sizeof(double));
  return costs;
}

// Sets the device (write_time/read_time), host and, when given, disk times of `costs` to the
// measured seconds over one forward step's, and step_time to 1.
inline void set_level_costs(CostModel& costs, double step_seconds, const LevelCosts& levels,
                            const DiskCosts* disk = nullptr) {
  if (!(step_seconds > 0.0))
    detail::fail<InvalidArgument>("set_level_costs: step_seconds = ", step_seconds, " must be > 0");
  costs.step_time = 1.0;
  costs.write_time = levels.device_write_seconds / step_seconds;
  costs.read_time = levels.device_read_seconds / step_seconds;
  costs.host_write_time = levels.host_write_seconds / step_seconds;
  costs.host_read_time = levels.host_read_seconds / step_seconds;
  if (disk) {
    costs.disk_write_time = disk->write_seconds / step_seconds;
    costs.disk_read_time = disk->read_seconds / step_seconds;
  }
  costs.validate();
}

}  // namespace rwd
