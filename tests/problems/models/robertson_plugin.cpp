// Robertson's kinetics as a plugin (tests/CMakeLists.txt builds it with rewind_add_model): a stiff
// model that declares itself autonomous, for the Rosenbrock methods through --model.
#include "rewind/model_plugin.hpp"
#include "robertson_model.hpp"

REWIND_MODEL(RobertsonModel)
