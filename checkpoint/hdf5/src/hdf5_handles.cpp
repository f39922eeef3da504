// Hdf5Handle and QuietHdf5 (rewind/hdf5/hdf5_handles.hpp): HDF5 1.10 C API.
#include "rewind/hdf5/hdf5_handles.hpp"

#include <utility>

namespace rwd::detail {

herr_t close_hdf5_id(hid_t id, Hdf5Kind kind) noexcept {
  switch (kind) {
    case Hdf5Kind::file:
      return H5Fclose(id);
    case Hdf5Kind::group:
      return H5Gclose(id);
    case Hdf5Kind::dataset:
      return H5Dclose(id);
    case Hdf5Kind::datatype:
      return H5Tclose(id);
    case Hdf5Kind::dataspace:
      return H5Sclose(id);
    case Hdf5Kind::attribute:
      return H5Aclose(id);
    case Hdf5Kind::property_list:
      return H5Pclose(id);
  }
  return -1;
}

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, -1)), kind_(other.kind_) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    close();
    id_ = std::exchange(other.id_, -1);
    kind_ = other.kind_;
  }
  return *this;
}

hid_t Hdf5Handle::release() noexcept {
  return std::exchange(id_, -1);
}

herr_t Hdf5Handle::close() noexcept {
  if (id_ < 0) return 0;
  return close_hdf5_id(std::exchange(id_, -1), kind_);
}

namespace {
// The lock of every rewind HDF5 scope, or null when the library serialises calls itself.
std::recursive_mutex* hdf5_call_lock() {
  static std::recursive_mutex lock;
  static const bool threadsafe = [] {
    hbool_t safe = false;
    return H5is_library_threadsafe(&safe) >= 0 && safe;
  }();
  return threadsafe ? nullptr : &lock;
}
}  // namespace

QuietHdf5::QuietHdf5() {
  if (std::recursive_mutex* lock = hdf5_call_lock()) lock_ = std::unique_lock(*lock);
  H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietHdf5::~QuietHdf5() {
  H5Eset_auto2(H5E_DEFAULT, function_, data_);
}

}  // namespace rwd::detail
