// Gray–Scott as a stencil model with the built-in's initial state, as a plugin
// (stencil_plugin_models.hpp says what it is for).
#include "rewind/model_plugin.hpp"
#include "stencil_plugin_models.hpp"

using GrayScott = rwd::testing::GrayScottWithStart;
REWIND_MODEL(GrayScott)
