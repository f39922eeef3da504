// src/cli/thrust_run.cpp — see device_run.hpp. The CPP device system (rewind::thrust_cpp, when
// REWIND_WITH_THRUST), and what a rewind built without CUDA says to --backend cuda.
#include "device_run.hpp"

#if REWIND_CLI_WITH_THRUST
#include "device_gradient_run.hpp"
#include "rewind/backend/thrust_backend.hpp"
#endif

namespace rwd::cli {

RunReport run_gradient_on_thrust(const RunSettings& settings, const PlanCallback& on_plan) {
#if REWIND_CLI_WITH_THRUST
  return detail::run_device_problem<ThrustBackend>(settings, on_plan);
#else
  (void)settings;
  (void)on_plan;
  rwd::detail::fail<InvalidArgument>(
      "--backend thrust: this rewind was built without Thrust (configure with "
      "-DREWIND_WITH_THRUST=ON; Debian: libthrust-dev)");
#endif
}

#if !REWIND_CLI_WITH_CUDA
bool built_with_cuda() {
  return false;
}
std::string cuda_unavailable_reason() {
  return "this rewind was built without CUDA (configure with -DREWIND_WITH_CUDA=ON where nvcc is "
         "installed)";
}
RunReport run_gradient_on_cuda(const RunSettings&, const PlanCallback&) {
  rwd::detail::fail<InvalidArgument>("--backend cuda: ", cuda_unavailable_reason());
}
#endif

}  // namespace rwd::cli
