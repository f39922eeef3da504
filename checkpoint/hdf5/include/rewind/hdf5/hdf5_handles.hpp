// rewind/hdf5/hdf5_handles.hpp — the two pieces of plumbing every rewind file that
// speaks HDF5's C API needs: silencing HDF5's own error printing, and identifiers closed on
// scope exit. Not public API; included by .cpp files that link HDF5 (snapshot files, parameter
// files, time series).
#pragma once

#include <hdf5.h>

#include <utility>

namespace rwd::detail {

// Turns off HDF5's automatic printing of errors while rewind calls it (rewind reports errors
// itself, in one line), restoring the previous handler afterwards (per thread in a thread-safe
// HDF5 build).
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// An HDF5 identifier closed on scope exit (a negative one, HDF5's failure value, is not closed).
class Hdf5Id {
 public:
  Hdf5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hdf5Id() {
    if (id_ >= 0) close_(id_);
  }
  Hdf5Id(const Hdf5Id&) = delete;
  Hdf5Id& operator=(const Hdf5Id&) = delete;
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  hid_t release() { return std::exchange(id_, -1); }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

}  // namespace rwd::detail
