// tests/fuzz/fuzz_input_file.hpp — the fuzz bytes as a file on disk, for readers that take a path
// (HDF5 opens files, not buffers). One file per process and extension, rewritten for every input,
// under /dev/shm when there is one (no disk I/O per execution).
//
//   const std::filesystem::path& path = rwd::fuzz::write_input(data, size, ".h5");
//   rwd::Hdf5SnapshotFile::open(path);
//   rwd::fuzz::expect_no_open_hdf5_objects("Hdf5SnapshotFile::open");
//
// Whatever a reader does with a bad file, it must close every HDF5 object it opened (files,
// groups, datasets, attributes, types, spaces) before it returns or throws: an object left open
// keeps the file open and its memory held. Memory that HDF5 itself keeps (its error stacks, free
// lists) is not rewind's: tests/fuzz/lsan.supp tells LeakSanitizer so.
#pragma once

#include <hdf5.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace rwd::fuzz {

inline const std::filesystem::path& input_path(const std::string& extension) {
  static std::map<std::string, std::filesystem::path> paths;
  auto [at, added] = paths.try_emplace(extension);
  if (added) {
    std::error_code error;
    const std::filesystem::path shm = "/dev/shm";
    const std::filesystem::path directory =
        std::filesystem::is_directory(shm, error) ? shm : std::filesystem::temp_directory_path();
    at->second = directory / ("rewind_fuzz_" + std::to_string(::getpid()) + extension);
  }
  return at->second;
}

// Writes the input to this process's file of that extension and returns its path.
inline const std::filesystem::path& write_input(const std::uint8_t* data, std::size_t size,
                                                const std::string& extension) {
  const std::filesystem::path& path = input_path(extension);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  return path;
}

// Aborts (a finding) when an HDF5 object is still open.
inline void expect_no_open_hdf5_objects(const char* after) {
  const ssize_t open = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open != 0) {
    std::fprintf(stderr, "%zd HDF5 object(s) left open after %s\n", open, after);
    std::abort();
  }
}

}  // namespace rwd::fuzz
