// tests/fuzz/fuzz_time_series.cpp — libFuzzer harness of the time-series loaders that
// `rewind train --data` uses: the bytes as a CSV file, and as an HDF5 file when they start with
// HDF5's signature, read by rwd::training::load_time_series and load_trajectories. Bad files must
// be refused with an rwd::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz_input_file.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/trajectory_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const char kHdf5Signature[] = "\x89HDF\r\n\x1a\n";
  const bool hdf5 = size >= 8 && std::memcmp(data, kHdf5Signature, 8) == 0;
  const auto& path = rwd::fuzz::write_input(data, size, hdf5 ? ".h5" : ".csv");
  try {
    (void)rwd::training::load_time_series(path);
  } catch (const rwd::Error&) {
  }
  try {
    (void)rwd::training::load_trajectories(path);
  } catch (const rwd::Error&) {
  }
  rwd::fuzz::expect_no_open_hdf5_objects("loading the file");
  return 0;
}
