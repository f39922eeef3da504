// The disk cost probe: it measures through a scratch file it removes, and the scratch files that a
// process killed while measuring left behind are removed later — only those, never a file of a
// process still running or one written since the caller started.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "rewind/store/disk_cost_probe.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using test::ScratchDirectory;
namespace fs = std::filesystem;

Index files_in(const fs::path& directory) {
  Index count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(directory)) ++count;
  return count;
}

void touch(const fs::path& path, fs::file_time_type when) {
  std::ofstream(path) << "probe";
  fs::last_write_time(path, when);
}

// The id of a process that has ended (a child, reaped).
pid_t ended_process() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(DiskCostProbe, MeasuresAndLeavesNothing) {
  ScratchDirectory scratch;
  const DiskCosts costs = measure_disk_costs(scratch.path(), 1000, 16);
  EXPECT_GT(costs.write_seconds, 0.0);
  EXPECT_GT(costs.read_seconds, 0.0);
  EXPECT_GE(costs.snapshot_bytes, 8000);
  EXPECT_EQ(files_in(scratch.path()), 0);
}

TEST(DiskCostProbe, RemovesOnlyWhatAKilledProbeLeft) {
  ScratchDirectory scratch;
  const auto started = fs::file_time_type::clock::now();
  const auto before = started - std::chrono::seconds(5);
  const std::string dead = std::to_string(ended_process());
  const fs::path abandoned = scratch.path() / ("rewind-disk-probe-" + dead + "-12345.h5");
  const fs::path running = scratch.path() / ("rewind-disk-probe-" + std::to_string(::getppid()) +
                                             "-1.h5");  // a process that is running
  const fs::path own = scratch.path() / ("rewind-disk-probe-" + std::to_string(::getpid()) +
                                         "-2.h5");  // this process's own probe
  const fs::path recent = scratch.path() / ("rewind-disk-probe-" + dead + "-3.h5");
  const fs::path other_names[] = {scratch.path() / "rewind-resume.h5",
                                  scratch.path() / ("rewind-disk-probe-" + dead + ".h5"),
                                  scratch.path() / ("rewind-disk-probe-x" + dead + "-4.h5"),
                                  scratch.path() / ("rewind-disk-probe-" + dead + "-5.h5.keep")};
  touch(abandoned, before);
  touch(running, before);
  touch(own, before);
  touch(recent, started + std::chrono::seconds(1));
  for (const fs::path& path : other_names) touch(path, before);

  const auto removed = remove_abandoned_disk_probes(scratch.path(), started);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], abandoned);
  EXPECT_FALSE(fs::exists(abandoned));
  for (const fs::path& path : {running, own, recent}) EXPECT_TRUE(fs::exists(path)) << path;
  for (const fs::path& path : other_names) EXPECT_TRUE(fs::exists(path)) << path;
}

TEST(DiskCostProbe, AMissingDirectoryRemovesNothing) {
  EXPECT_TRUE(remove_abandoned_disk_probes("/nonexistent/rewind-probe-dir",
                                           fs::file_time_type::clock::now())
                  .empty());
}

}  // namespace
}  // namespace rwd
