// resume_costs.hpp — the costs a resumable run measured before planning (one forward step, a
// snapshot's disk write and read, a copy into and out of the device and host levels), kept in its
// snapshot file so that every later attempt plans with the same figures.
//
// A two-level or three-level plan depends on measured times, which differ from one process to
// the next; a resumed attempt that measured again would plan another schedule, and its file
// would be refused. So the first attempt writes its measurements, exactly (hexadecimal floats),
// as a line of the run's identity, and a later attempt reads them back from the file it is about
// to continue instead of measuring. A file of another configuration is still refused by the
// identity check, which names the first line that differs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "rewind/backend/backend.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/snapshot_level_probe.hpp"
#include "rewind/store/snapshot_ranks.hpp"

namespace rwd::cli {

// What was measured; a time below zero was not measured (that level is not in the plan).
struct MeasuredCosts {
  double step_seconds = -1.0;
  DiskCosts disk{.write_seconds = -1.0, .read_seconds = -1.0, .snapshot_bytes = 0};
  LevelCosts levels{.device_write_seconds = -1.0,
                    .device_read_seconds = -1.0,
                    .host_write_seconds = -1.0,
                    .host_read_seconds = -1.0,
                    .snapshot_bytes = 0};
  bool has_disk() const { return disk.write_seconds >= 0.0 && disk.read_seconds >= 0.0; }
  bool has_levels() const {
    return levels.device_write_seconds >= 0.0 && levels.device_read_seconds >= 0.0 &&
           levels.host_write_seconds >= 0.0 && levels.host_read_seconds >= 0.0;
  }
};

inline constexpr const char* kMeasuredCostsKey = "measured costs = ";

// The identity line: "measured costs = " and nine exact numbers.
inline std::string measured_costs_line(const MeasuredCosts& c) {
  std::ostringstream out;
  out << kMeasuredCostsKey << std::hexfloat << c.step_seconds << ' ' << c.disk.write_seconds << ' '
      << c.disk.read_seconds << ' ' << static_cast<double>(c.disk.snapshot_bytes) << ' '
      << c.levels.device_write_seconds << ' ' << c.levels.device_read_seconds << ' '
      << c.levels.host_write_seconds << ' ' << c.levels.host_read_seconds << ' '
      << static_cast<double>(c.levels.snapshot_bytes) << '\n';
  return out.str();
}

// The costs of measured_costs_line within an identity; none when the line is missing or not
// nine numbers (then the run measures afresh, and the identity check names the difference).
inline std::optional<MeasuredCosts> parse_measured_costs(const std::string& identity) {
  const std::size_t at = identity.find(kMeasuredCostsKey);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t begin = at + std::char_traits<char>::length(kMeasuredCostsKey);
  const std::size_t end = identity.find('\n', begin);
  const std::string line = identity.substr(begin, end == std::string::npos ? end : end - begin);
  double v[9];
  const char* cursor = line.c_str();
  for (double& value : v) {
    char* next = nullptr;
    value = std::strtod(cursor, &next);  // strtod reads hexadecimal floats exactly
    if (next == cursor) return std::nullopt;
    cursor = next;
  }
  while (*cursor == ' ') ++cursor;
  if (*cursor != '\0') return std::nullopt;
  MeasuredCosts c;
  c.step_seconds = v[0];
  c.disk = {.write_seconds = v[1],
            .read_seconds = v[2],
            .snapshot_bytes = static_cast<std::int64_t>(v[3])};
  c.levels = {.device_write_seconds = v[4],
              .device_read_seconds = v[5],
              .host_write_seconds = v[6],
              .host_read_seconds = v[7],
              .snapshot_bytes = static_cast<std::int64_t>(v[8])};
  if (!(c.step_seconds > 0.0)) return std::nullopt;
  return c;
}

// The costs in `file`'s identity, when it is a readable snapshot file that has them. An
// unreadable file gives none: the store then refuses it with the reason (never deletes it).
inline std::optional<MeasuredCosts> measured_costs_in(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, error))) return std::nullopt;
  try {
    return parse_measured_costs(Hdf5SnapshotFile::open(file).identity());
  } catch (const StorageError&) {
    return std::nullopt;
  }
}

// The costs the killed attempt of this resumable run measured, read from its snapshot file in
// `directory` (under MPI each rank's own, DiskStoreOptions::choose_file's name); none when no
// file has them. Across ranks the answer is agreed: every rank plans with the same figures (the
// largest of each, as when measured; the files of one run hold the same ones).
template <VectorBackend B>
std::optional<MeasuredCosts> costs_of_earlier_attempt(const std::filesystem::path& directory,
                                                      const typename B::Vector& y0) {
  const auto ranks = process_slice<B>(y0).ranks;
  DiskStoreOptions names;
  names.directory = directory;
  names.resume = true;
  const std::optional<MeasuredCosts> mine =
      measured_costs_in(names.choose_file(ranks && ranks->size() > 1 ? ranks->rank() : -1));
  if (max_on_any_process<B>(mine ? 1.0 : 0.0) == 0.0) return std::nullopt;
  const MeasuredCosts own = mine.value_or(MeasuredCosts{});
  const auto agreed = [](double value) { return max_on_any_process<B>(value); };
  MeasuredCosts c;
  c.step_seconds = agreed(own.step_seconds);
  c.disk.write_seconds = agreed(own.disk.write_seconds);
  c.disk.read_seconds = agreed(own.disk.read_seconds);
  c.disk.snapshot_bytes =
      static_cast<std::int64_t>(agreed(static_cast<double>(own.disk.snapshot_bytes)));
  c.levels.device_write_seconds = agreed(own.levels.device_write_seconds);
  c.levels.device_read_seconds = agreed(own.levels.device_read_seconds);
  c.levels.host_write_seconds = agreed(own.levels.host_write_seconds);
  c.levels.host_read_seconds = agreed(own.levels.host_read_seconds);
  c.levels.snapshot_bytes =
      static_cast<std::int64_t>(agreed(static_cast<double>(own.levels.snapshot_bytes)));
  return c;
}

}  // namespace rwd::cli
