// A stiff model whose f depends on t, as a plugin (forced_relaxation.hpp says what it is for): the
// Rosenbrock methods take it through --model with the time derivatives the plugin derives.
#include "forced_relaxation.hpp"
#include "rewind/model_plugin.hpp"

using ForcedRelaxation = rwd::testing::ForcedRelaxation;
REWIND_MODEL(ForcedRelaxation)
