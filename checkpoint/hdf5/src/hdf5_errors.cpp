// hdf5_error_text and hdf5_error_suffix (rewind/hdf5/hdf5_errors.hpp): HDF5 1.10 C API.
#include "rewind/hdf5/hdf5_errors.hpp"

#include <hdf5.h>

namespace rwd::detail {

std::string hdf5_error_text() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* error, void* data) -> herr_t {
        auto* out = static_cast<std::string*>(data);
        if (!error->desc || !*error->desc) return 0;
        if (!out->empty()) *out += "; ";
        *out += error->desc;
        return 0;
      },
      &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::string hdf5_error_suffix() {
  std::string text = hdf5_error_text();
  if (text.empty()) return text;
  text.insert(0, " [HDF5: ");
  text += ']';
  return text;
}

}  // namespace rwd::detail
