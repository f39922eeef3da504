// Hdf5SnapshotFile: round trips, the layout h5dump sees, and every fault it must name — a
// flipped bit, another run's file, a missing, replaced or truncated file, a full disk, a
// directory without write permission — each a StorageError, never wrong data.
#include "rewind/disk/hdf5_snapshot_file.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <vector>

#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using test::ScratchDirectory;

constexpr Index kSize = 1000;
constexpr int kMeta = 40;

std::vector<double> pattern(Index step) {
  return testing::snapshot_values(kSize, step);
}
std::vector<std::byte> meta_of(Index step) {
  return testing::snapshot_meta(kMeta, step);
}

// The message of the StorageError that `f` throws (a test failure if it throws nothing or
// something else).
template <class F>
std::string storage_error(F&& f) {
  return testing::error_message<StorageError>(std::forward<F>(f));
}

TEST(Hdf5SnapshotFile, RoundTripIsBitForBit) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "s.h5", 4, kSize, kMeta);
  EXPECT_EQ(file.run_id().size(), 32u);
  EXPECT_EQ(file.bytes_per_snapshot(), kSize * 8 + kMeta);
  for (int slot = 0; slot < 3; ++slot)
    file.write(slot, 10 * slot, pattern(10 * slot), meta_of(10 * slot));
  file.write(1, 99, pattern(99), meta_of(99));  // overwrite
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  for (int slot : {0, 2}) {
    file.read(slot, 10 * slot, state, meta);
    EXPECT_EQ(0, std::memcmp(state.data(), pattern(10 * slot).data(), kSize * 8));
    EXPECT_EQ(meta, meta_of(10 * slot));
  }
  file.read(1, 99, state, meta);
  EXPECT_EQ(state, pattern(99));
  EXPECT_EQ(file.record(1).step, 99);
  EXPECT_EQ(file.record(3).step, -1);
  EXPECT_EQ(file.record(0).run_id, file.run_id());
  EXPECT_EQ(file.record(0).stored_bytes, kSize * 8);
  for (int slot = 0; slot < 4; ++slot) EXPECT_EQ(file.verify(slot), "") << slot;
  file.close();

  auto again = Hdf5SnapshotFile::open(dir / "s.h5");
  EXPECT_EQ(again.slots(), 4);
  EXPECT_EQ(again.state_size(), kSize);
  EXPECT_EQ(again.meta_size(), kMeta);
  EXPECT_EQ(again.record(2).step, 20);
  EXPECT_EQ(again.verify(2), "");
}

TEST(Hdf5SnapshotFile, CompressionRoundTrips) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(
      dir / "c.h5", 2, kSize, kMeta, {.compression_level = 6, .identity = {}, .progress_bytes = 0});
  std::vector<double> smooth(kSize, 1.0);  // compresses well
  file.write(0, 5, smooth, meta_of(5));
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  file.read(0, 5, state, meta);
  EXPECT_EQ(state, smooth);
  EXPECT_LT(file.record(0).stored_bytes, kSize * 8 / 4);
}

TEST(Hdf5SnapshotFile, LayoutIsWhatTheReadmeSays) {
  if (std::system("command -v h5dump > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "h5dump not installed";
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "l.h5", 3, 8, kMeta);
  file.write(1, 7, std::vector<double>(8, 2.5), meta_of(7));
  file.close();
  const std::string out = (dir / "h5dump.txt").string();
  ASSERT_EQ(0, std::system(("h5dump -H " + (dir / "l.h5").string() + " > " + out).c_str()));
  const std::vector<char> text = test::read_bytes(out);
  const std::string dump(text.begin(), text.end());
  for (const char* expected :
       {"DATASET \"states\"", "H5T_IEEE_F64LE", "( 3, 8 )", "DATASET \"slots\"", "\"step\"",
        "\"checksum\"", "\"run_id\"", "\"meta\"", "ATTRIBUTE \"run_id\"",
        "ATTRIBUTE \"format_version\"", "ATTRIBUTE \"state_size\""})
    EXPECT_NE(dump.find(expected), std::string::npos) << expected << "\n" << dump;
}

TEST(Hdf5SnapshotFile, FlippedBitIsAChecksumError) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "f.h5", 2, kSize, kMeta);
  file.write(1, 3, pattern(3), meta_of(3));
  const std::int64_t offset = test::find_double(dir / "f.h5", pattern(3)[500]);
  ASSERT_GT(offset, 0);
  test::flip_bit(dir / "f.h5", offset + 2);
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  const std::string message = storage_error([&] { file.read(1, 3, state, meta); });
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("slot 1"), std::string::npos) << message;
  EXPECT_NE(message.find("y_3"), std::string::npos) << message;
  EXPECT_NE(file.verify(1).find("checksum mismatch"), std::string::npos);
}

TEST(Hdf5SnapshotFile, WrongStepIsRefused) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "w.h5", 2, kSize, kMeta);
  file.write(0, 3, pattern(3), meta_of(3));
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  EXPECT_NE(storage_error([&] { file.read(0, 4, state, meta); }).find("holds y_3"),
            std::string::npos);
  EXPECT_NE(storage_error([&] { file.read(1, 4, state, meta); }).find("never written"),
            std::string::npos);
}

TEST(Hdf5SnapshotFile, ExistingFileIsNeverOverwritten) {
  ScratchDirectory dir;
  auto first = Hdf5SnapshotFile::create(dir / "e.h5", 2, kSize, kMeta);
  first.close();
  const std::string message =
      storage_error([&] { Hdf5SnapshotFile::create(dir / "e.h5", 2, kSize, kMeta); });
  EXPECT_NE(message.find("already exists"), std::string::npos) << message;
  EXPECT_NE(message.find(first.run_id()), std::string::npos) << message;
}

TEST(Hdf5SnapshotFile, PublishingGivesTheFileItsNameAndNeverReplacesOne) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "run.h5.creating", 2, kSize, kMeta);
  file.write(0, 3, pattern(3), meta_of(3));
  file.publish_as(dir / "run.h5");
  EXPECT_EQ(file.path(), dir / "run.h5");
  EXPECT_FALSE(std::filesystem::exists(dir / "run.h5.creating"));
  // The open file goes on under its new name: writes and reads, and the in-place check.
  file.write(1, 4, pattern(4), meta_of(4));
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  file.read(0, 3, state, meta);
  EXPECT_EQ(state, pattern(3));
  file.close();
  EXPECT_EQ(Hdf5SnapshotFile::open(dir / "run.h5").record(1).step, 4);
  // A name already taken is refused; both files stay as they were.
  auto second = Hdf5SnapshotFile::create(dir / "second.h5.creating", 2, kSize, kMeta);
  const std::string message = storage_error([&] { second.publish_as(dir / "run.h5"); });
  EXPECT_NE(message.find("already exists"), std::string::npos) << message;
  EXPECT_EQ(second.path(), dir / "second.h5.creating");
  EXPECT_TRUE(std::filesystem::exists(dir / "second.h5.creating"));
  EXPECT_EQ(Hdf5SnapshotFile::open(dir / "run.h5").run_id(), file.run_id());
}

TEST(Hdf5SnapshotFile, AnotherRunsFileInPlaceIsRefused) {
  ScratchDirectory dir;
  auto ours = Hdf5SnapshotFile::create(dir / "ours.h5", 2, kSize, kMeta);
  ours.write(0, 3, pattern(3), meta_of(3));
  auto theirs = Hdf5SnapshotFile::create(dir / "theirs.h5", 2, kSize, kMeta);
  theirs.write(0, 3, pattern(3), meta_of(3));
  theirs.close();
  // Same layout, same data, another run: copied over our file in place (same inode).
  test::overwrite_in_place(dir / "ours.h5", test::read_bytes(dir / "theirs.h5"));
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  const std::string message = storage_error([&] { ours.read(0, 3, state, meta); });
  EXPECT_NE(message.find("written by run " + theirs.run_id()), std::string::npos) << message;
  EXPECT_NE(message.find(ours.run_id()), std::string::npos) << message;
}

TEST(Hdf5SnapshotFile, RemovedOrReplacedFileIsNoticed) {
  ScratchDirectory dir;
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  {
    auto file = Hdf5SnapshotFile::create(dir / "r.h5", 2, kSize, kMeta);
    file.write(0, 3, pattern(3), meta_of(3));
    std::filesystem::remove(dir / "r.h5");
    EXPECT_NE(storage_error([&] { file.read(0, 3, state, meta); }).find("was removed"),
              std::string::npos);
    EXPECT_NE(storage_error([&] { file.write(1, 4, pattern(4), meta_of(4)); }).find("was removed"),
              std::string::npos);
  }
  auto file = Hdf5SnapshotFile::create(dir / "p.h5", 2, kSize, kMeta);
  file.write(0, 3, pattern(3), meta_of(3));
  auto other = Hdf5SnapshotFile::create(dir / "q.h5", 2, kSize, kMeta);
  other.close();
  std::filesystem::rename(dir / "q.h5", dir / "p.h5");
  EXPECT_NE(storage_error([&] { file.read(0, 3, state, meta); }).find("replaced by another file"),
            std::string::npos);
}

TEST(Hdf5SnapshotFile, TruncatedFileIsAnError) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "t.h5", 4, kSize, kMeta);
  for (int slot = 0; slot < 4; ++slot) file.write(slot, slot, pattern(slot), meta_of(slot));
  const auto size = std::filesystem::file_size(dir / "t.h5");
  std::filesystem::resize_file(dir / "t.h5", size / 2);
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  const std::string message = storage_error([&] { file.read(3, 3, state, meta); });
  EXPECT_FALSE(message.empty());
  file.close();
  // Reopening it is refused as well.
  const std::string reopen = storage_error([&] { Hdf5SnapshotFile::open(dir / "t.h5"); });
  EXPECT_FALSE(reopen.empty());
}

TEST(Hdf5SnapshotFile, MissingOrForeignFilesAreRefusedOnOpen) {
  ScratchDirectory dir;
  EXPECT_NE(storage_error([&] { Hdf5SnapshotFile::open(dir / "none.h5"); }).find("does not exist"),
            std::string::npos);
  { std::ofstream(dir / "text.h5") << "not hdf5"; }
  EXPECT_NE(
      storage_error([&] { Hdf5SnapshotFile::open(dir / "text.h5"); }).find("not an HDF5 file"),
      std::string::npos);
}

TEST(Hdf5SnapshotFile, DirectoryProblemsAreRefusedBeforeWriting) {
  ScratchDirectory dir;
  EXPECT_NE(storage_error([&] {
              Hdf5SnapshotFile::create(dir / "no" / "s.h5", 2, kSize, kMeta);
            }).find("does not exist"),
            std::string::npos);
  { std::ofstream(dir / "plain") << "x"; }
  EXPECT_NE(storage_error([&] {
              Hdf5SnapshotFile::create(dir / "plain" / "s.h5", 2, kSize, kMeta);
            }).find("not a directory"),
            std::string::npos);
  // More than the disk holds (about 8 PB): refused before anything is written.
  const std::string message =
      storage_error([&] { Hdf5SnapshotFile::create(dir / "big.h5", 1000, Index{1} << 40, kMeta); });
  EXPECT_NE(message.find("bytes free but the snapshot file needs"), std::string::npos) << message;
  EXPECT_TRUE(dir.files().size() == 1);  // only "plain"
}

TEST(Hdf5SnapshotFile, DirectoryWithoutWritePermissionIsRefused) {
  ScratchDirectory dir;
  std::filesystem::create_directory(dir / "ro");
  std::filesystem::permissions(
      dir / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                      std::filesystem::perms::group_read | std::filesystem::perms::group_exec |
                      std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
  std::filesystem::permissions(dir.path(), std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add);
  // Root ignores permissions: test as an unprivileged user in a child process.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    try {
      Hdf5SnapshotFile::create(dir / "ro" / "s.h5", 2, kSize, kMeta);
    } catch (const StorageError& error) {
      _exit(std::string(error.what()).find("not writable") != std::string::npos ? 0 : 1);
    } catch (...) {
      _exit(4);
    }
    _exit(2);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong message, 2: no error, 3: setuid failed, 4: other";
  EXPECT_FALSE(std::filesystem::exists(dir / "ro" / "s.h5"));
}

TEST(Hdf5SnapshotFile, FileSizeLimitIsReportedAsSuch) {
  ScratchDirectory dir;
  auto file = Hdf5SnapshotFile::create(dir / "z.h5", 8, kSize, kMeta);
  file.write(0, 0, pattern(0), meta_of(0));
  std::string message;
  {
    test::FileSizeLimit limit(4096);  // the header fits, no slot does
    message = storage_error([&] { file.write(7, 1, pattern(1), meta_of(1)); });
  }
  EXPECT_NE(message.find("file size limit"), std::string::npos) << message;
  EXPECT_NE(message.find("slot 7"), std::string::npos) << message;
  // What was written before is intact.
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  file.read(0, 0, state, meta);
  EXPECT_EQ(state, pattern(0));
}

TEST(Hdf5SnapshotFile, FullDiskIsReportedAsSuch) {
  ScratchDirectory dir;
  std::filesystem::create_directory(dir / "small");
  const std::string mount =
      "mount -t tmpfs -o size=256k tmpfs " + (dir / "small").string() + " 2>/dev/null";
  if (std::system(mount.c_str()) != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (not root?)";
  std::string message;
  {
    auto file = Hdf5SnapshotFile::create(dir / "small" / "d.h5", 8, 2000, kMeta);  // 128 KB
    // Something else fills the disk.
    {
      std::ofstream filler(dir / "small" / "filler", std::ios::binary);
      std::vector<char> block(4096, 'x');
      while (filler.write(block.data(), block.size())) {
      }
    }
    std::vector<double> state(2000, 1.5);
    message = storage_error([&] {
      for (int s = 0; s < 8; ++s) file.write(s, s, state, meta_of(s));
    });
  }
  std::system(("umount " + (dir / "small").string()).c_str());
  EXPECT_NE(message.find("disk is full"), std::string::npos) << message;
}

TEST(Hdf5SnapshotFile, InvalidSizesAreRefused) {
  ScratchDirectory dir;
  EXPECT_THROW(Hdf5SnapshotFile::create(dir / "a.h5", 0, kSize, kMeta), InvalidArgument);
  EXPECT_THROW(Hdf5SnapshotFile::create(dir / "a.h5", 2, 0, kMeta), InvalidArgument);
  EXPECT_THROW(Hdf5SnapshotFile::create(dir / "a.h5", 2, kSize, -1), InvalidArgument);
  EXPECT_THROW(Hdf5SnapshotFile::create(dir / "a.h5", 2, kSize, kMeta,
                                        {.compression_level = 10, .identity = {}}),
               InvalidArgument);
  auto file = Hdf5SnapshotFile::create(dir / "a.h5", 2, kSize, kMeta);
  EXPECT_THROW(file.write(2, 0, pattern(0), meta_of(0)), InvalidArgument);
  EXPECT_THROW(file.write(0, 0, std::vector<double>(3), meta_of(0)), InvalidArgument);
}

// Found while fuzzing the reader (tests/fuzz/fuzz_snapshot_file.cpp): files whose attributes claim
// sizes their datasets do not have. state_size = 2^62 made bytes_per_snapshot() (printed by
// rewind inspect) overflow 64 bits; a state_size of 1000 over a /states of 4 values would have
// been read out of bounds. Both are refused on open, naming the file; so are datasets of another
// type.
TEST(Hdf5SnapshotFile, AttributesThatDoNotDescribeTheDatasetsAreRefusedOnOpen) {
  const std::filesystem::path findings =
      std::filesystem::path(REWIND_SOURCE_DIR) / "tests/fuzz/findings";
  for (const char* name : {"state_size_2e62.h5", "state_size_mismatch.h5"}) {
    const std::string message =
        storage_error([&] { (void)Hdf5SnapshotFile::open(findings / name); });
    EXPECT_NE(message.find(name), std::string::npos) << message;
  }
  // /slots with a compound type that is not rewind's record (a fuzzer's mutation of the seed):
  // HDF5 1.10 overflowed its conversion buffer reading it; refused before any read now.
  const std::string foreign =
      storage_error([&] { (void)Hdf5SnapshotFile::open(findings / "slots_foreign_compound.h5"); });
  EXPECT_NE(foreign.find("does not have the type rewind writes"), std::string::npos) << foreign;
  // The seed they were made from opens.
  const auto seed =
      std::filesystem::path(REWIND_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_snapshot_file/plain.h5";
  const Hdf5SnapshotFile file = Hdf5SnapshotFile::open(seed);
  EXPECT_EQ(file.state_size(), 4);
  EXPECT_EQ(file.record(2).step, 17);
}

std::vector<std::byte> progress_bytes(double marker, std::size_t doubles) {
  std::vector<double> values(doubles, marker);
  std::vector<std::byte> bytes(doubles * sizeof(double));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(Hdf5SnapshotFile, ProgressRecordsAlternateAndATornOneFallsBackToTheOneBefore) {
  ScratchDirectory dir;
  SnapshotFileOptions options;
  options.identity = "problem = p\nsteps = 10\n";
  options.progress_bytes = 800;
  {
    auto file = Hdf5SnapshotFile::create(dir / "r.h5", 3, kSize, kMeta, options);
    EXPECT_TRUE(file.read_progress().empty());
    file.write(2, 5, pattern(5), meta_of(5));
    file.write_progress(progress_bytes(1.25, 100));
    file.write_progress(progress_bytes(2.5, 40));
    EXPECT_EQ(file.read_progress(), progress_bytes(2.5, 40));
    file.close();
  }
  // A kill while the newest record was being written: it fails its checksum.
  const std::int64_t offset = test::find_double(dir / "r.h5", 2.5);
  ASSERT_GT(offset, 0);
  test::flip_bit(dir / "r.h5", offset + 3);
  auto file = Hdf5SnapshotFile::reopen(dir / "r.h5");
  EXPECT_EQ(file.identity(), options.identity);
  EXPECT_EQ(file.progress_capacity(), 800);
  EXPECT_EQ(file.read_progress(), progress_bytes(1.25, 100));
  // The snapshots the earlier process wrote are still its run's, and intact.
  EXPECT_TRUE(file.holds(2, 5));
  EXPECT_FALSE(file.holds(2, 6));
  EXPECT_FALSE(file.holds(0, 0));  // never written
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  file.read(2, 5, state, meta);
  EXPECT_EQ(state, pattern(5));
  // The next record never overwrites the newest intact one.
  file.write_progress(progress_bytes(3.75, 10));
  EXPECT_EQ(file.read_progress(), progress_bytes(3.75, 10));
  file.write(2, 7, pattern(7), meta_of(7));
  file.close();
  const std::int64_t state_offset = test::find_double(dir / "r.h5", pattern(7)[300]);
  ASSERT_GT(state_offset, 0);
  test::flip_bit(dir / "r.h5", state_offset + 1);
  auto again = Hdf5SnapshotFile::reopen(dir / "r.h5");
  EXPECT_FALSE(again.holds(2, 7)) << "a damaged snapshot is not taken over";
  EXPECT_EQ(again.read_progress(), progress_bytes(3.75, 10));
}

// The ranks of a split state continue from the newest record they all hold: a file one record
// ahead goes back to the one before, and its newer record must never come back.
TEST(Hdf5SnapshotFile, ProgressCanContinueAfterTheRecordBeforeTheNewest) {
  ScratchDirectory dir;
  SnapshotFileOptions options;
  options.identity = "ranks = 2\n";
  options.progress_bytes = 800;
  {
    auto file = Hdf5SnapshotFile::create(dir / "r.h5", 3, kSize, kMeta, options);
    EXPECT_TRUE(file.progress_records().empty());
    for (double marker : {1.0, 2.0, 3.0}) file.write_progress(progress_bytes(marker, 10));
    const auto records = file.progress_records();
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].sequence, 2u);
    EXPECT_EQ(records[0].payload, progress_bytes(2.0, 10));
    EXPECT_EQ(records[1].sequence, 3u);
    EXPECT_EQ(records[1].payload, progress_bytes(3.0, 10));
    file.close();
  }
  auto file = Hdf5SnapshotFile::reopen(dir / "r.h5");
  file.continue_after_progress(2);
  ASSERT_EQ(file.progress_records().size(), 1u);
  EXPECT_EQ(file.read_progress(), progress_bytes(2.0, 10));
  // Erased on disk, not only forgotten by this object.
  EXPECT_EQ(Hdf5SnapshotFile::open(dir / "r.h5").read_progress(), progress_bytes(2.0, 10));
  // The next record takes number 3 again, beside record 2.
  file.write_progress(progress_bytes(4.0, 10));
  const auto records = file.progress_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].sequence, 2u);
  EXPECT_EQ(records[1].sequence, 3u);
  EXPECT_EQ(records[1].payload, progress_bytes(4.0, 10));
  // Continuing after the newest changes nothing; a read-only file is refused.
  file.continue_after_progress(3);
  EXPECT_EQ(file.read_progress(), progress_bytes(4.0, 10));
  file.close();
  auto reader = Hdf5SnapshotFile::open(dir / "r.h5");
  EXPECT_THROW(reader.continue_after_progress(2), StorageError);
}

TEST(Hdf5SnapshotFile, ProgressRecordsAreRefusedWhereTheyCannotBeKept) {
  ScratchDirectory dir;
  const std::string too_big = testing::error_message<InvalidArgument>([&] {
    auto file =
        Hdf5SnapshotFile::create(dir / "a.h5", 1, kSize, kMeta,
                                 {.compression_level = 0, .identity = {}, .progress_bytes = 8});
    file.write_progress(progress_bytes(1.0, 2));
  });
  EXPECT_NE(too_big.find("room for 8"), std::string::npos) << too_big;
  const std::string compressed = testing::error_message<InvalidArgument>([&] {
    Hdf5SnapshotFile::create(dir / "b.h5", 1, kSize, kMeta,
                             {.compression_level = 3, .identity = {}, .progress_bytes = 8});
  });
  EXPECT_NE(compressed.find("without compression"), std::string::npos) << compressed;
  Hdf5SnapshotFile::create(dir / "plain.h5", 1, kSize, kMeta).close();
  const std::string plain = storage_error([&] { Hdf5SnapshotFile::reopen(dir / "plain.h5"); });
  EXPECT_NE(plain.find("was not made to be resumed"), std::string::npos) << plain;
}

}  // namespace
}  // namespace rwd
