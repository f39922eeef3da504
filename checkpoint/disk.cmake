# The disk level of checkpoint/: HDF5 snapshot files and their background I/O (rewind::disk).
# Included from checkpoint/CMakeLists.txt. XXH3 checksums come from Debian's libxxhash-dev, used
# header-only (XXH_INLINE_ALL), so nothing extra is linked. HDF5 is found through Debian's
# pkg-config file of the serial build (FindHDF5 would need the C language enabled, and plain
# "hdf5" may name an MPI build).
find_package(PkgConfig REQUIRED)
pkg_check_modules(REWIND_HDF5 REQUIRED IMPORTED_TARGET GLOBAL hdf5-serial)
find_package(Threads REQUIRED)
find_path(REWIND_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)

add_library(rewind_disk STATIC
  ${CMAKE_CURRENT_LIST_DIR}/src/hdf5_snapshot_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/snapshot_file_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/src/disk_cost_probe.cpp)
add_library(rewind::disk ALIAS rewind_disk)
set_target_properties(rewind_disk PROPERTIES EXPORT_NAME disk POSITION_INDEPENDENT_CODE ON)
target_include_directories(rewind_disk PRIVATE ${REWIND_XXHASH_INCLUDE_DIR})
target_link_libraries(rewind_disk PUBLIC rewind_checkpoint Threads::Threads PRIVATE PkgConfig::REWIND_HDF5)
target_compile_options(rewind_disk PRIVATE ${REWIND_WARNINGS})
