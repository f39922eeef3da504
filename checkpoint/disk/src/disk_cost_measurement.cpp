// measure_hdf5_disk_costs: the measurement behind rwd::measure_disk_costs
// (rewind/store/disk_cost_probe.hpp).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <random>
#include <vector>

#include "hdf5_disk_level.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/format.hpp"

namespace rwd {

DiskCosts measure_hdf5_disk_costs(const std::filesystem::path& path, Index state_size,
                                  int meta_size, int samples) {
  auto file = Hdf5SnapshotFile::create(path, std::min(samples, 4), state_size, meta_size);
  struct Cleanup {
    Hdf5SnapshotFile& file;
    ~Cleanup() { file.remove(); }
  } cleanup{file};

  std::vector<double> state(static_cast<std::size_t>(state_size));
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (double& x : state) x = uniform(random);
  std::vector<std::byte> meta(static_cast<std::size_t>(meta_size), std::byte{7});

  using Clock = std::chrono::steady_clock;
  std::vector<double> writes, reads;
  for (int i = 0; i < samples; ++i) {
    const int slot = i % file.slots();
    const auto start = Clock::now();
    file.write(slot, i, state, meta);
    writes.push_back(seconds_since(start));
    const auto middle = Clock::now();
    file.read(slot, i, state, meta);
    reads.push_back(seconds_since(middle));
  }
  const auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  DiskCosts costs;
  costs.write_seconds = median(writes);
  costs.read_seconds = median(reads);
  costs.snapshot_bytes = file.bytes_per_snapshot();
  return costs;
}

}  // namespace rwd
