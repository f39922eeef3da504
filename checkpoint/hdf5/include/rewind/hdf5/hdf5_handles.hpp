// rewind/hdf5/hdf5_handles.hpp — HDF5 identifiers that close themselves, and a scope that keeps
// HDF5 from printing its own error stack. Not public API: included only by .cpp files of the
// parts that link rewind::hdf5 privately (snapshot files, parameter files, time series), never by
// a public header, so HDF5 stays out of every part's interface.
//
//   rwd::detail::QuietHdf5 quiet;  // rewind reports errors itself, in one line
//   rwd::detail::Hdf5Handle file(H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT),
//                                rwd::detail::Hdf5Kind::file);
//   if (!file.valid()) ...;        // H5Fclose runs when `file` goes out of scope
#pragma once

#include <hdf5.h>

#include <mutex>

namespace rwd::detail {

// What an identifier names; it chooses the function that closes it.
enum class Hdf5Kind {
  file,           // H5Fclose
  group,          // H5Gclose
  dataset,        // H5Dclose
  datatype,       // H5Tclose
  dataspace,      // H5Sclose
  attribute,      // H5Aclose
  property_list,  // H5Pclose
};

// Closes `id` with the function of its kind; returns HDF5's status (negative on failure).
herr_t close_hdf5_id(hid_t id, Hdf5Kind kind) noexcept;

// Owns one HDF5 identifier and closes it on scope exit (a negative identifier, HDF5's failure
// value, is held but never closed). Move-only; a moved-from handle holds nothing.
class Hdf5Handle {
 public:
  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, Hdf5Kind kind) noexcept : id_(id), kind_(kind) {}
  Hdf5Handle(Hdf5Handle&& other) noexcept;
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
  ~Hdf5Handle() { close(); }

  hid_t get() const { return id_; }
  Hdf5Kind kind() const { return kind_; }
  bool valid() const { return id_ >= 0; }
  // Gives up ownership: the caller closes the returned identifier.
  hid_t release() noexcept;
  // Closes the identifier now and returns HDF5's status (0 when nothing was held), for callers
  // that must report a failed close (a file's last flush happens there).
  herr_t close() noexcept;

 private:
  hid_t id_ = -1;
  Hdf5Kind kind_ = Hdf5Kind::file;
};

// Turns off HDF5's automatic printing of errors while rewind calls it (rewind reports errors
// itself, in one line), restoring the previous handler afterwards (per thread in a thread-safe
// HDF5 build). It is also the scope of rewind's HDF5 calls: when the HDF5 library was not built
// thread-safe (H5is_library_threadsafe; Debian's MPI build of HDF5 1.10 is not), it holds one
// process-wide recursive lock, so that the snapshot files' background I/O thread and HDF5 calls
// on other threads (another store, a parameter file) never run inside HDF5 at once. Nothing
// done inside such a scope may wait for another thread's HDF5 work.
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;  // held only for a library not thread-safe
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

}  // namespace rwd::detail
