// src/cli/input_file.hpp — an input file named on the command line, checked before any work.
//
//   rwd::cli::require_input_file("--data", settings.data);
//   // rewind: error: --data '/no/such.csv' does not exist   (exit status 2)
//
// Every subcommand refuses a missing input file the same way, as bad input (exit status 2),
// before it builds or loads anything; the loaders' own errors (StorageError, exit 1) are left to
// files that exist but cannot be read.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "rewind/error.hpp"

namespace rwd::cli {

inline void require_input_file(std::string_view flag, const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    rwd::detail::fail<InvalidArgument>(flag, " '", path, "' does not exist");
  if (std::filesystem::is_directory(status))
    rwd::detail::fail<InvalidArgument>(flag, " '", path, "' is a directory, not a file");
}

}  // namespace rwd::cli
