// measure_disk_costs (rewind/store/disk_cost_probe.hpp): the scratch file's name here, the
// measurement in rewind::disk (checkpoint/disk/src/disk_cost_measurement.cpp).
#include "rewind/store/disk_cost_probe.hpp"

#include <cerrno>
#include <csignal>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "rewind/error.hpp"
#include "rewind/store/disk_level.hpp"

namespace rwd {

namespace {
constexpr const char* kProbePrefix = "rewind-disk-probe-";
}  // namespace

DiskCosts measure_disk_costs(const std::filesystem::path& directory, Index state_size,
                             int meta_size, int samples) {
  if (samples < 1)
    detail::fail<InvalidArgument>("disk cost probe: samples = ", samples, " must be >= 1");
  std::random_device device;
  const std::filesystem::path path = directory / (kProbePrefix + std::to_string(::getpid()) + "-" +
                                                  std::to_string(device()) + ".h5");
  DiskCosts costs;
  detail::measure_disk_costs_at(path, state_size, meta_size, samples, costs);
  return costs;
}

std::vector<std::filesystem::path> remove_abandoned_disk_probes(
    const std::filesystem::path& directory, std::filesystem::file_time_type started) {
  std::vector<std::filesystem::path> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    // kProbePrefix, the process id, '-', a random number, ".h5".
    if (!name.starts_with(kProbePrefix) || !name.ends_with(".h5")) continue;
    const std::string rest = name.substr(std::char_traits<char>::length(kProbePrefix));
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 9 ||
        rest.find_first_not_of("0123456789") != dash)
      continue;
    const auto pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM) continue;  // running
    std::error_code stat_error;
    const auto written = std::filesystem::last_write_time(entry.path(), stat_error);
    if (stat_error || written >= started) continue;
    if (std::filesystem::remove(entry.path(), stat_error)) removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace rwd
