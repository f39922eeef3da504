# Sacado (Trilinos' automatic differentiation, Debian's libtrilinos-sacado-dev), used as a
# header-only library: the imported target rewind_sacado, where found (bench/ad_choice and its
# test link it).
#
# Debian builds Trilinos with Kokkos and Teuchos enabled, and Sacado's configuration header then
# makes its forward-mode types include Kokkos and Teuchos headers, which need Teuchos' library (a
# static initialiser) and MPI's headers. Sacado's SFad needs none of that: the target bypasses the
# configuration header (TRILINOS_NO_CONFIG_H, Trilinos' own switch) and defines the two settings
# of Debian's build that the forward types use (the "new" expression design as SFad, C++11).
# Consequence: such a translation unit cannot also include other Trilinos headers that need their
# configuration. Included as system headers (their warnings are not rewind's). rewind/model.hpp
# needs no target: it sets the same switches itself and includes <trilinos/Sacado_Fad_SFad.hpp>
# (Debian's layout) from the system's include path; where Sacado is not found, the problems
# part's header check leaves that header out (cmake/RewindParts.cmake).
find_path(REWIND_SACADO_INCLUDE_DIR Sacado_Fad_SFad.hpp PATH_SUFFIXES trilinos)
if(REWIND_SACADO_INCLUDE_DIR AND NOT TARGET rewind_sacado)
  add_library(rewind_sacado INTERFACE IMPORTED)
  set_target_properties(rewind_sacado PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${REWIND_SACADO_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${REWIND_SACADO_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS
      "TRILINOS_NO_CONFIG_H;SACADO_NEW_FAD_DESIGN_IS_DEFAULT;HAVE_SACADO_CXX11")
endif()
