// The stochastic logistic test model as a plugin (tests/CMakeLists.txt builds it with
// rewind_add_model): a model with a diffusion, for the loader's and the tool's SDE runs.
#include "logistic_sde.hpp"
#include "rewind/model_plugin.hpp"

REWIND_MODEL(LogisticSde)
