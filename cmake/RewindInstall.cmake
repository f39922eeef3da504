# Installs headers, libraries and the CMake package: find_package(rewind) → rewind::rewind.
include(CMakePackageConfigHelpers)

set(REWIND_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rewind)

# Public headers of every component land in one include/rewind/ tree.
foreach(dir include integrators/include checkpoint/include src/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()

set(REWIND_EXPORTED_TARGETS rewind_core rewind_integrators rewind_checkpoint rewind_disk rewind)
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
