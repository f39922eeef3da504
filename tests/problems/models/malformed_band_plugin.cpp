// The SIR model's description with half-bandwidths but no band_jacobian (tests/CMakeLists.txt
// builds it with rewind_add_model): a malformed band, which the loader refuses before any work.
#include "rewind/model_plugin.hpp"
#include "sir_model.hpp"

extern "C" __attribute__((visibility("default"))) const rwd_model_plugin* rewind_model_plugin(
    void) {
  static const rwd_model_plugin description = [] {
    rwd_model_plugin d = *rwd::plugin_detail::ModelExport<Sir>::describe("Sir");
    d.band_upper = 1;
    d.band_lower = 1;
    return d;
  }();
  return &description;
}
