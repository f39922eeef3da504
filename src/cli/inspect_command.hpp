// src/cli/inspect_command.hpp — the `rewind inspect` subcommand: what a snapshot file holds, and
// whether every snapshot in it is intact.
//
//   rewind inspect /scratch/rewind-snapshots-4242-1a2b3c4d-0.h5
//   rewind inspect kept.h5 --json
//
// Lists the file's run id, sizes and compression, then one row per slot: the step it holds, the
// time (decoded from the carry when the metadata is rewind's), bytes on disk and the result of
// recomputing its checksum. Exit status 0 when every written slot is intact, 1 when any is not
// (the rows say which and why) or the file is not a readable rewind snapshot file, 2 when it
// does not exist.
//
// JSON: {"file", "run_id", "slots", "state_size", "meta_size", "compression_level",
// "file_bytes", "snapshot_bytes", "written_slots", "corrupt_slots", "intact" (bool),
// "slot_records": [{"slot", "step", "t" (or null), "stored_bytes", "status" ("ok", "empty" or
// "corrupt"), "problem" (why, or null)}]}.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_inspect_command(CLI::App& app);

}  // namespace rwd::cli
