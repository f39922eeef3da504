// A 1-D reaction–diffusion model as a plugin (tests/CMakeLists.txt builds it with
// rewind_add_model): a model that declares its band Jacobian, for the band solvers through
// --model.
#include "reaction_diffusion_model.hpp"
#include "rewind/model_plugin.hpp"

REWIND_MODEL(ReactionDiffusionModel)
