// src/cli/plot_script.hpp — the pictures of `rewind plan --plot` and `rewind fit --plot`: a
// report's data written beside the picture, drawn by a script of rewind's scripts/ folder.
#pragma once

#include <string>

namespace rwd::cli {

// Writes `plot_data` to `data_file` and runs scripts/SCRIPT on it and `output` with Debian's
// /usr/bin/python3 (REWIND_SCRIPTS_DIR overrides the scripts' folder). StorageError when the data
// cannot be written, InvalidArgument when the script is missing, Error when it fails (the data
// file stays, and is named).
void run_plot_script(const std::string& script, const std::string& plot_data,
                     const std::string& data_file, const std::string& output);

}  // namespace rwd::cli
