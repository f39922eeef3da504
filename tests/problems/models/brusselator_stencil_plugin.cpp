// The 2-D Brusselator as a stencil model whose initial state depends on its parameters, as a
// plugin (stencil_plugin_models.hpp says what it is for).
#include "rewind/model_plugin.hpp"
#include "stencil_plugin_models.hpp"

using Brusselator = rwd::testing::BrusselatorWithStart;
REWIND_MODEL(Brusselator)
