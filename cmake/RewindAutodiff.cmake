# Automatic-differentiation libraries from Debian (scripts/install_dependencies.sh installs them):
#
#   rewind_sacado   Sacado, header-only (cmake/RewindSacado.cmake); rewind/model.hpp derives its
#                   vjps with it (where Sacado is not found, that header is left out of the
#                   problems part's header check).
#   rewind_adolc    ADOL-C (adolc/adolc.h, libadolc): only measured against Sacado by
#                   bench/ad_choice.
#
# Eigen's AutoDiffScalar, the third one measured, comes with Eigen. REWIND_AD_CHOICE_FOUND is ON
# when Sacado and ADOL-C are both there: bench/ad_choice and its test need them.
include(${CMAKE_CURRENT_LIST_DIR}/RewindSacado.cmake)
if(TARGET rewind_sacado)
  set(REWIND_WITH_SACADO ON)
else()
  set(REWIND_WITH_SACADO OFF)
  message(STATUS "rewind: Sacado not found (libtrilinos-sacado-dev): rewind/model.hpp is left out")
endif()

# The library and header directly: Debian's adolc.pc also asks for -lboost_system, which
# libadolc-dev does not install and libadolc does not need.
find_path(REWIND_ADOLC_INCLUDE_DIR adolc/adolc.h)
find_library(REWIND_ADOLC_LIBRARY adolc)
if(REWIND_ADOLC_INCLUDE_DIR AND REWIND_ADOLC_LIBRARY AND NOT TARGET rewind_adolc)
  add_library(rewind_adolc INTERFACE IMPORTED)
  set_target_properties(rewind_adolc PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${REWIND_ADOLC_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${REWIND_ADOLC_LIBRARY}")
endif()

if(TARGET rewind_sacado AND TARGET rewind_adolc)
  set(REWIND_AD_CHOICE_FOUND ON)
else()
  set(REWIND_AD_CHOICE_FOUND OFF)
  message(STATUS "rewind: Sacado or ADOL-C not found (scripts/install_dependencies.sh installs "
                 "them): bench/ad_choice and its test are left out")
endif()
