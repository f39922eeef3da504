# Installs headers, libraries and the CMake package: find_package(rewind) → rewind::rewind, and
# each part on its own (rewind::schedule, rewind::store, rewind::disk, rewind::checkpoint,
# rewind::integrators, rewind::adjoint, rewind::problems, rewind::neural, rewind::fit,
# rewind::core).
include(CMakePackageConfigHelpers)

set(REWIND_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rewind)

# Public headers of every part land in one include/rewind/ tree.
get_property(_rewind_roots GLOBAL PROPERTY REWIND_INCLUDE_ROOTS)
foreach(dir ${PROJECT_SOURCE_DIR}/include ${_rewind_roots})
  install(DIRECTORY ${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()

get_property(_rewind_parts GLOBAL PROPERTY REWIND_EXPORTED_TARGETS)
set(REWIND_EXPORTED_TARGETS rewind_core ${_rewind_parts} rewind_checkpoint rewind)
set(REWIND_COMPONENTS core)
if(TARGET rewind_thrust_cpp)
  list(APPEND REWIND_EXPORTED_TARGETS rewind_thrust_cpp)
  list(APPEND REWIND_COMPONENTS thrust)
endif()
if(TARGET rewind_thrust_cuda)
  list(APPEND REWIND_EXPORTED_TARGETS rewind_thrust_cuda)
  list(APPEND REWIND_COMPONENTS cuda)
endif()

install(TARGETS ${REWIND_EXPORTED_TARGETS} EXPORT rewindTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rewindTargets NAMESPACE rewind:: DESTINATION ${REWIND_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rewindConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rewindConfig.cmake INSTALL_DESTINATION ${REWIND_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rewindConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rewindConfig.cmake ${PROJECT_BINARY_DIR}/rewindConfigVersion.cmake
        DESTINATION ${REWIND_INSTALL_CMAKEDIR})
# rewind_add_model(NAME SOURCE...), which rewindConfig.cmake includes: model plugins.
install(FILES ${PROJECT_SOURCE_DIR}/cmake/RewindModel.cmake DESTINATION ${REWIND_INSTALL_CMAKEDIR})
