# rewind_add_model(NAME SOURCE...): builds a model plugin — a shared library NAME.so from the
# sources, one of which ends with REWIND_MODEL(Type) (rewind/model_plugin.hpp) — that the
# `rewind` tool loads with --model PATH and C++ with rwd::load_model_plugin.
#
#   find_package(rewind REQUIRED)         # or in rewind's own tree
#   rewind_add_model(sir sir_model.cpp)   # → $<TARGET_FILE:sir>, e.g. build/sir.so
#   # rewind run --model build/sir.so
#
# The plugin links rewind::problems (rewind/model.hpp and Sacado's headers from the system's
# include path) and exports nothing but the entry point: symbols are hidden by default, so two
# plugins (or a plugin and the tool) never interpose each other's copies of inline code. Part of
# the installed package (rewindConfig.cmake includes this file) and of rewind's own build.
function(rewind_add_model name)
  if(NOT ARGN)
    message(FATAL_ERROR "rewind_add_model(${name}): no source; give the model's source files")
  endif()
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE rewind::problems)
  target_compile_features(${name} PRIVATE cxx_std_20)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
endfunction()
