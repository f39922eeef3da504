// src/cli/inspect_files.hpp — `rewind inspect` for the files rewind writes besides snapshot
// files: observation files (rewind generate), model and parameter files (rewind train
// --save-parameters, training checkpoints), time series (.csv, .h5 with t and y) and model
// plugins (rewind_add_model).
//
//   FileKind kind = identify_file("lv.h5");        // FileKind::observations
//   inspect_observations("lv.h5", /*json=*/false);  // the table a person reads
//
// Each kind is read with the loader the library uses for it, so whatever inspect accepts the
// other subcommands accept too, and a damaged file is refused with the loader's own message.
#pragma once

#include <filesystem>
#include <string>

namespace rwd::cli {

enum class FileKind {
  snapshots,     // "rewind snapshots": slots of a checkpointed run
  observations,  // "rewind observations": rewind generate's output, rewind fit's input
  parameters,    // "rewind mlp parameters": a network's parameters, maybe a whole model
  time_series,   // a measured series (.csv, or .h5 with /t and /y): rewind train/fit --data
  model_plugin,  // a shared library: a model built by rewind_add_model (--model PATH)
};

// The kind of `file`, from its HDF5 "format" attribute or, for text, its extension.
// InvalidArgument: the file does not exist, is a directory, or is none of the files rewind
// writes or reads (the message names the kinds it knows).
FileKind identify_file(const std::filesystem::path& file);

// Print what the file holds: text for a person, or one JSON object on stdout. Each returns the
// exit status (0: read whole and consistent).
int inspect_observations(const std::filesystem::path& file, bool json);
int inspect_parameters(const std::filesystem::path& file, bool json);
int inspect_time_series(const std::filesystem::path& file, bool json);
// A model plugin: its name, states or grid and fields, parameters with their defaults, run
// defaults, initial state, autonomy and the derivatives it carries (inspect_model.cpp); refused
// as `--model` would refuse it.
int inspect_model_plugin(const std::filesystem::path& file, bool json);

}  // namespace rwd::cli
