// Lorenz-96 as a 1-D stencil model with an initial state, as a plugin (stencil_plugin_models.hpp
// says what it is for).
#include "rewind/model_plugin.hpp"
#include "stencil_plugin_models.hpp"

using Lorenz96 = rwd::testing::Lorenz96WithStart;
REWIND_MODEL(Lorenz96)
