// Hdf5SnapshotFile::publish_as on file systems without hard links (FAT, some network and FUSE
// file systems), whose link() fails with EPERM: the file is renamed instead, never over a file
// that has the name already — with renameat2's RENAME_NOREPLACE where the file system has it,
// else with a plain rename after a check. This machine's file systems have hard links, so this
// program replaces link() and renameat2() (its own definitions come before the C library's) with
// versions that fail as such file systems do when a test asks, and otherwise make the system
// call.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace {
int link_errno = 0;                   // link() fails with this when not 0
int renameat2_errno = 0;              // renameat2() likewise
std::function<void()> before_rename;  // runs inside renameat2(), before it fails or renames
}  // namespace

extern "C" int link(const char* from, const char* to) noexcept {
  if (link_errno != 0) {
    errno = link_errno;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_linkat, AT_FDCWD, from, AT_FDCWD, to, 0));
}

extern "C" int renameat2(int from_dir, const char* from, int to_dir, const char* to,
                         unsigned int flags) noexcept {
  if (before_rename) before_rename();
  if (renameat2_errno != 0) {
    errno = renameat2_errno;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_renameat2, from_dir, from, to_dir, to, flags));
}

namespace rwd {
namespace {

using test::ScratchDirectory;

constexpr Index kSize = 100;
constexpr int kMeta = 16;

// Each test starts with the real calls and leaves them so.
class PublishWithoutHardLinks : public ::testing::Test {
 protected:
  void TearDown() override {
    link_errno = renameat2_errno = 0;
    before_rename = nullptr;
  }
  // A file under a temporary name with y_3 in slot 0.
  static Hdf5SnapshotFile creating(const std::filesystem::path& path) {
    auto file = Hdf5SnapshotFile::create(path, 2, kSize, kMeta);
    file.write(0, 3, testing::snapshot_values(kSize, 3), testing::snapshot_meta(kMeta, 3));
    return file;
  }
  static std::string contents(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void expect_published(Hdf5SnapshotFile& file, const std::filesystem::path& from,
                               const std::filesystem::path& to) {
    EXPECT_EQ(file.path(), to);
    EXPECT_FALSE(std::filesystem::exists(from));
    file.write(1, 4, testing::snapshot_values(kSize, 4), testing::snapshot_meta(kMeta, 4));
    file.close();
    auto reopened = Hdf5SnapshotFile::open(to);
    EXPECT_EQ(reopened.record(0).step, 3);
    EXPECT_EQ(reopened.record(1).step, 4);
  }
};

TEST_F(PublishWithoutHardLinks, TheFileIsRenamedWithoutReplacing) {
  ScratchDirectory dir;
  auto file = creating(dir / "run.h5.creating");
  link_errno = EPERM;
  file.publish_as(dir / "run.h5");
  expect_published(file, dir / "run.h5.creating", dir / "run.h5");
}

TEST_F(PublishWithoutHardLinks, WithoutNoReplaceRenamingEitherAPlainRenameDoes) {
  ScratchDirectory dir;
  auto file = creating(dir / "run.h5.creating");
  link_errno = EPERM;
  renameat2_errno = EINVAL;  // what a file system without RENAME_NOREPLACE answers
  file.publish_as(dir / "run.h5");
  expect_published(file, dir / "run.h5.creating", dir / "run.h5");
}

TEST_F(PublishWithoutHardLinks, ANameAlreadyTakenIsRefused) {
  ScratchDirectory dir;
  std::ofstream(dir / "run.h5") << "someone else's file";
  auto file = creating(dir / "run.h5.creating");
  for (int rename_errno : {0, EINVAL}) {
    link_errno = EPERM;
    renameat2_errno = rename_errno;
    const std::string message =
        testing::error_message<StorageError>([&] { file.publish_as(dir / "run.h5"); });
    EXPECT_NE(message.find("already exists; rewind never overwrites one"), std::string::npos)
        << message;
    EXPECT_EQ(file.path(), dir / "run.h5.creating");
    EXPECT_EQ(contents(dir / "run.h5"), "someone else's file");
  }
}

TEST_F(PublishWithoutHardLinks, AFileThatAppearsAfterTheCheckIsNotReplaced) {
  // The name is free when publish_as looks, and taken by the time it renames: RENAME_NOREPLACE
  // refuses atomically.
  ScratchDirectory dir;
  auto file = creating(dir / "run.h5.creating");
  link_errno = EPERM;
  before_rename = [&] { std::ofstream(dir / "run.h5") << "appeared meanwhile"; };
  const std::string message =
      testing::error_message<StorageError>([&] { file.publish_as(dir / "run.h5"); });
  EXPECT_NE(message.find("already exists"), std::string::npos) << message;
  EXPECT_EQ(contents(dir / "run.h5"), "appeared meanwhile");
  EXPECT_TRUE(std::filesystem::exists(dir / "run.h5.creating"));
}

TEST_F(PublishWithoutHardLinks, OtherFailuresAreNamedAndTheFileKeepsItsName) {
  ScratchDirectory dir;
  auto file = creating(dir / "run.h5.creating");
  link_errno = EIO;
  std::string message =
      testing::error_message<StorageError>([&] { file.publish_as(dir / "run.h5"); });
  EXPECT_NE(message.find(std::strerror(EIO)), std::string::npos) << message;
  link_errno = EPERM;
  renameat2_errno = EXDEV;
  message = testing::error_message<StorageError>([&] { file.publish_as(dir / "run.h5"); });
  EXPECT_NE(message.find(std::strerror(EXDEV)), std::string::npos) << message;
  EXPECT_EQ(file.path(), dir / "run.h5.creating");
  EXPECT_FALSE(std::filesystem::exists(dir / "run.h5"));
  link_errno = renameat2_errno = 0;
  file.publish_as(dir / "run.h5");
  expect_published(file, dir / "run.h5.creating", dir / "run.h5");
}

}  // namespace
}  // namespace rwd
