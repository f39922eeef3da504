// A scratch directory every MPI rank sees (for a snapshot file shared by every rank): rank 0
// makes it and tells the others its name; it is removed once every rank is done with it.
#pragma once

#include <mpi.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/scratch_directory.hpp"

namespace rwd::test {

class SharedScratchDirectory {
 public:
  SharedScratchDirectory() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string name;
    if (rank == 0) {
      own_.emplace("rewind-mpi-test");
      name = own_->path().string();
    }
    int length = static_cast<int>(name.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    name.resize(static_cast<std::size_t>(length));
    MPI_Bcast(name.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = name;
  }
  ~SharedScratchDirectory() { MPI_Barrier(MPI_COMM_WORLD); }  // then rank 0 removes it
  SharedScratchDirectory(const SharedScratchDirectory&) = delete;
  SharedScratchDirectory& operator=(const SharedScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::filesystem::path> files() const {
    std::vector<std::filesystem::path> out;
    for (const auto& entry : std::filesystem::directory_iterator(path_))
      out.push_back(entry.path());
    return out;
  }

 private:
  std::optional<ScratchDirectory> own_;
  std::filesystem::path path_;
};

}  // namespace rwd::test
