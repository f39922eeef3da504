// tests/fuzz/fuzz_snapshot_file.cpp — libFuzzer harness of the snapshot-file reader: what
// `rewind inspect` and a run reading its disk level do with a file, on any bytes. Opens the file
// (rwd::Hdf5SnapshotFile::open), then for every slot reads the record, verifies it and reads it
// back. Bad files must be refused with an rwd::Error; anything else (a crash, a sanitizer report,
// another exception, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_input_file.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = rwd::fuzz::write_input(data, size, ".h5");
  try {
    rwd::Hdf5SnapshotFile file = rwd::Hdf5SnapshotFile::open(path);
    const int slots = file.slots() < 64 ? file.slots() : 64;
    // Verifying or reading a slot allocates the sizes the reader accepted, as inspect does (a
    // file that claims a huge state is "out of memory" there): only small ones here.
    const bool small = file.state_size() <= (1 << 20) && file.meta_size() <= (1 << 20);
    std::vector<double> state(small ? static_cast<std::size_t>(file.state_size()) : 0);
    std::vector<std::byte> meta(small ? static_cast<std::size_t>(file.meta_size()) : 0);
    (void)file.bytes_per_snapshot();
    for (int slot = 0; slot < slots; ++slot) {
      const rwd::SnapshotSlotRecord record = file.record(slot);
      if (record.step < 0 || !small) continue;
      (void)file.verify(slot);
      try {
        file.read(slot, record.step, state, meta);
      } catch (const rwd::Error&) {
      }
    }
  } catch (const rwd::Error&) {
  }
  rwd::fuzz::expect_no_open_hdf5_objects("reading a snapshot file");
  return 0;
}
