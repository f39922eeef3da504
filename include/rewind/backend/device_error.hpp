// rewind/backend/device_error.hpp — the error a GPU backend throws when the device itself fails.
//
//   try {
//     auto y = rwd::ThrustBackend::zeros(n);
//   } catch (const rwd::DeviceError& e) {
//     // "zeros: a state that does not fit the device: 8589934592 bytes requested, 1073741824
//     //  bytes free of 85031714816"
//   }
//
// Thrown by the CUDA build of rwd::ThrustBackend (rewind/backend/cuda_check.hpp) for every CUDA
// failure — an allocation that does not fit, a kernel that could not launch or faulted, a copy
// that failed — naming the backend operation and CUDA's own error string. It is plain C++, so
// code compiled without CUDA can catch it too; rwd::Error catches everything.
#pragma once

#include "rewind/error.hpp"

namespace rwd {

class DeviceError : public Error {
 public:
  using Error::Error;
};

}  // namespace rwd
