// The SIR test model as a plugin (tests/CMakeLists.txt builds it with rewind_add_model, once as
// it is and once with REWIND_MODEL_ABI_VERSION overridden: a model of another ABI version).
#include "rewind/model_plugin.hpp"
#include "sir_model.hpp"

REWIND_MODEL(Sir)
