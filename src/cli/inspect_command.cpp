// src/cli/inspect_command.cpp — see inspect_command.hpp.
#include "inspect_command.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "exit_status.hpp"
#include "inspect_files.hpp"
#include "process_group.hpp"
#include "report_output.hpp"
#include "rewind/carry.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

struct SlotReport {
  SnapshotSlotRecord record;
  std::optional<double> t;
  std::string problem;  // empty when intact
};

// The carry's time, when the metadata is rewind's own carry record.
std::optional<double> carry_time(const Hdf5SnapshotFile& file, int slot, Index step) {
  if (file.meta_size() != static_cast<int>(sizeof(Carry)) || step < 0) return std::nullopt;
  Hdf5SnapshotFile& writable_view = const_cast<Hdf5SnapshotFile&>(file);
  std::vector<double> state(static_cast<std::size_t>(file.state_size()));
  std::vector<std::byte> meta(sizeof(Carry));
  try {
    writable_view.read(slot, step, state, meta);
  } catch (const Error&) {
    return std::nullopt;
  }
  Carry carry;
  std::memcpy(&carry, meta.data(), sizeof carry);
  return carry.t;
}

int inspect_snapshots(const std::string& path, bool json) {
  Hdf5SnapshotFile file = Hdf5SnapshotFile::open(path);
  std::vector<SlotReport> reports;
  Index written = 0, corrupt = 0;
  for (int slot = 0; slot < file.slots(); ++slot) {
    SlotReport report;
    report.record = file.record(slot);
    if (report.record.step >= 0) {
      ++written;
      report.problem = file.verify(slot);
      if (!report.problem.empty())
        ++corrupt;
      else
        report.t = carry_time(file, slot, report.record.step);
    }
    reports.push_back(std::move(report));
  }
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));

  if (json) {
    Json out;
    out["file"] = path;
    out["run_id"] = file.run_id();
    out["slots"] = file.slots();
    out["state_size"] = file.global_state_size();
    out["ranks"] = file.ranks();  // > 1: one file shared by ranks, each slice checked
    out["meta_size"] = file.meta_size();
    out["compression_level"] = file.compression_level();
    out["file_bytes"] = file_bytes;
    out["snapshot_bytes"] = file.bytes_per_snapshot();
    out["written_slots"] = written;
    out["corrupt_slots"] = corrupt;
    out["intact"] = corrupt == 0;
    Json rows = Json::array();
    for (const SlotReport& r : reports) {
      Json row;
      row["slot"] = r.record.slot;
      row["step"] = r.record.step;
      row["t"] = r.t ? Json(*r.t) : Json(nullptr);
      row["stored_bytes"] = r.record.stored_bytes;
      row["status"] = r.record.step < 0 ? "empty" : r.problem.empty() ? "ok" : "corrupt";
      row["problem"] = r.problem.empty() ? Json(nullptr) : Json(r.problem);
      rows.push_back(row);
    }
    out["slot_records"] = rows;
    emit_json_report(out);
  } else {
    std::cout << "rewind snapshot file " << path << "\n"
              << "  run id            " << file.run_id() << "\n"
              << "  slots             " << file.slots() << " (" << written << " written)\n"
              << "  state size        " << file.global_state_size() << " values + "
              << file.meta_size() << " metadata bytes"
              << (file.shared()
                      ? " per rank"
                      : " = " + std::to_string(file.bytes_per_snapshot()) + " bytes per snapshot")
              << "\n"
              << "  written by        "
              << (file.shared() ? std::to_string(file.ranks()) +
                                      " ranks, each its slice (checksums per slot and rank)"
                                : std::string("one process"))
              << "\n"
              << "  compression       "
              << (file.compression_level() > 0
                      ? "shuffle + deflate " + std::to_string(file.compression_level())
                      : std::string("none"))
              << "\n"
              << "  file size         " << file_bytes << " bytes\n\n";
    std::printf("  %6s %12s %16s %14s  %s\n", "slot", "step", "t", "bytes on disk", "checksum");
    for (const SlotReport& r : reports) {
      if (r.record.step < 0) {
        std::printf("  %6d %12s %16s %14s  %s\n", r.record.slot, "-", "-", "-", "empty");
        continue;
      }
      char t[32] = "-";
      if (r.t) std::snprintf(t, sizeof t, "%.10g", *r.t);
      std::printf("  %6d %12lld %16s %14lld  %s\n", r.record.slot,
                  static_cast<long long>(r.record.step), t,
                  static_cast<long long>(r.record.stored_bytes),
                  r.problem.empty() ? "ok" : ("CORRUPT: " + r.problem).c_str());
    }
    std::cout << "\n  "
              << (corrupt == 0 ? "every written slot is intact"
                               : std::to_string(corrupt) + " corrupt slot(s)")
              << "\n";
  }
  return corrupt == 0 ? kExitSuccess : kExitFailure;
}

}  // namespace

CLI::App* add_inspect_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "inspect",
      "Show what a file rewind wrote holds: the slots of a snapshot file (every checksum\n"
      "verified), an observation file, a model or parameter file, a time series, a model\n"
      "plugin (rewind_add_model)");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  command->add_option("file", *path, "The file (.h5, .csv, .so)")->required();
  command->add_flag("--json", *json, "One JSON object on stdout instead of the table");
  command->footer(
      "Exit status: 0 the file is whole (every written snapshot slot intact), 1 a slot is\n"
      "corrupt or the file cannot be read, 2 the file does not exist or is no file rewind\n"
      "writes.");
  command->callback([path, json] {
    ProcessGroup::require_one_process("rewind inspect");
    switch (identify_file(*path)) {
      case FileKind::snapshots:
        if (inspect_snapshots(*path, *json) != kExitSuccess)
          rwd::detail::fail<StorageError>("snapshot file '", *path,
                                          "' has corrupt slots (listed above)");
        break;
      case FileKind::observations:
        inspect_observations(*path, *json);
        break;
      case FileKind::parameters:
        inspect_parameters(*path, *json);
        break;
      case FileKind::time_series:
        inspect_time_series(*path, *json);
        break;
      case FileKind::model_plugin:
        inspect_model_plugin(*path, *json);
        break;
    }
  });
  return command;
}

}  // namespace rwd::cli
