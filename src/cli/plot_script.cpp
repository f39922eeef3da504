// src/cli/plot_script.cpp — see plot_script.hpp.
#include "plot_script.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "rewind/error.hpp"

namespace rwd::cli {

void run_plot_script(const std::string& script, const std::string& plot_data,
                     const std::string& data_file, const std::string& output) {
  {
    std::ofstream out(data_file);
    out << plot_data << "\n";
    if (!out)
      rwd::detail::fail<StorageError>("--plot: cannot write the plot data '", data_file, "'");
  }
  const char* dir = std::getenv("REWIND_SCRIPTS_DIR");
  const std::filesystem::path path = std::filesystem::path(dir ? dir : REWIND_SCRIPTS_DIR) / script;
  if (!std::filesystem::exists(path))
    rwd::detail::fail<InvalidArgument>("--plot needs ", path.string(),
                                       " (set REWIND_SCRIPTS_DIR to rewind's scripts/ folder)");
  const std::string command =
      "/usr/bin/python3 '" + path.string() + "' '" + data_file + "' '" + output + "'";
  if (const int status = std::system(command.c_str()); status != 0)
    rwd::detail::fail<Error>("--plot: ", path.string(), " failed (status ", status,
                             "); its data is in ", data_file);
}

}  // namespace rwd::cli
