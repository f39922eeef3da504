// The Gray–Scott stencil model's description without its Jacobian's values (tests/CMakeLists.txt
// builds it with rewind_add_model): a malformed grid, which the loader refuses before any work.
#include "rewind/model_plugin.hpp"
#include "stencil_plugin_models.hpp"

extern "C" __attribute__((visibility("default"))) const rwd_model_plugin* rewind_model_plugin(
    void) {
  static const rwd_model_plugin description = [] {
    using Export = rwd::plugin_detail::StencilExport<rwd::testing::GrayScottWithStart>;
    rwd_model_plugin d = *Export::describe("GrayScott");
    d.grid_jacobian_values = nullptr;
    return d;
  }();
  return &description;
}
