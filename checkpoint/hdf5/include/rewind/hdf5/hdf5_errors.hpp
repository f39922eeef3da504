// rewind/hdf5/hdf5_errors.hpp — HDF5's error stack as text, for the one-line messages of
// rwd::StorageError. Not public API (see hdf5_handles.hpp).
//
//   rwd::detail::QuietHdf5 quiet;
//   if (H5Dwrite(...) < 0)
//     throw rwd::StorageError("writing y_7 to 'run.h5'" + rwd::detail::hdf5_error_suffix());
//   // "writing y_7 to 'run.h5' [HDF5: can't write data; ...; No space left on device]"
#pragma once

#include <string>

namespace rwd::detail {

// The descriptions on the calling thread's HDF5 error stack, from the API call down to the
// function where the error arose, joined by "; " ("" when the stack is empty). Clears the stack.
std::string hdf5_error_text();

// " [HDF5: <hdf5_error_text()>]", or "" when the stack is empty. Clears the stack.
std::string hdf5_error_suffix();

}  // namespace rwd::detail
