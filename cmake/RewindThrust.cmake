# Thrust backend targets (included from the top-level CMakeLists.txt when REWIND_WITH_THRUST).
#
#   rewind_thrust_cpp  (rewind::thrust_cpp)  rwd::ThrustBackend on the CPU: Thrust's CPP
#       (sequential) device system, compiled by the ordinary C++ compiler against Debian's
#       Thrust headers. Every *_test.cpp links it, so CI tests the GPU code path without a GPU.
#   rewind_thrust_cuda (rewind::thrust_cuda) rwd::ThrustBackend on the GPU, for .cu sources
#       compiled by nvcc (REWIND_WITH_CUDA only): C++20, --extended-lambda, and the CUDA
#       toolkit's own Thrust/CUB (include/cccl), never Debian's 1.x headers in /usr/include.
#   rewind_thrust_omp  (rewind::thrust_omp)  rwd::ThrustBackend on Thrust's OMP device system
#       (REWIND_WITH_OPENMP only): the same headers as thrust_cpp with OpenMP threads; its test
#       shows that reductions give the CPP system's bits for every thread count.
#
# Both are plain INTERFACE targets (header-only backend), ready for the install export set.

# THRUST_VERSION of a thrust/version.h as major.minor.patch (e.g. 101702 -> 1.17.2).
function(_rewind_thrust_version header out_var)
  file(STRINGS "${header}" _line REGEX "^#define[ \t]+THRUST_VERSION[ \t]+[0-9]+")
  string(REGEX REPLACE "^#define[ \t]+THRUST_VERSION[ \t]+([0-9]+).*" "\\1" _v "${_line}")
  math(EXPR _major "${_v} / 100000")
  math(EXPR _minor "(${_v} / 100) % 1000")
  math(EXPR _patch "${_v} % 100")
  set(${out_var} "${_major}.${_minor}.${_patch}" PARENT_SCOPE)
endfunction()

# --- CPU: Thrust's CPP device system ------------------------------------------------------------
find_path(REWIND_THRUST_INCLUDE_DIR thrust/version.h
  DOC "Directory holding thrust/version.h for the CPP device system (Debian: libthrust-dev)")
if(NOT REWIND_THRUST_INCLUDE_DIR)
  message(FATAL_ERROR
    "REWIND_WITH_THRUST is ON but no Thrust headers (thrust/version.h) were found. Install them "
    "(Debian/Ubuntu: apt-get install libthrust-dev libcub-dev), point CMake at them with "
    "-DREWIND_THRUST_INCLUDE_DIR=<dir>, or configure with -DREWIND_WITH_THRUST=OFF.")
endif()
_rewind_thrust_version("${REWIND_THRUST_INCLUDE_DIR}/thrust/version.h" REWIND_THRUST_VERSION)
message(STATUS "rewind: Thrust ${REWIND_THRUST_VERSION} for the CPP device system "
               "(${REWIND_THRUST_INCLUDE_DIR})")

add_library(rewind_thrust_cpp INTERFACE)
add_library(rewind::thrust_cpp ALIAS rewind_thrust_cpp)
set_target_properties(rewind_thrust_cpp PROPERTIES EXPORT_NAME thrust_cpp)
target_link_libraries(rewind_thrust_cpp INTERFACE rewind_core)
# An external, absolute path (usually /usr/include, which CMake drops as implicit): the same in
# the build and the install tree, so no BUILD_INTERFACE/INSTALL_INTERFACE split is needed.
target_include_directories(rewind_thrust_cpp SYSTEM INTERFACE "${REWIND_THRUST_INCLUDE_DIR}")
target_compile_definitions(rewind_thrust_cpp INTERFACE
  THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP)

# --- CPU threads: Thrust's OMP device system --------------------------------------------------
if(REWIND_WITH_OPENMP)
  add_library(rewind_thrust_omp INTERFACE)
  add_library(rewind::thrust_omp ALIAS rewind_thrust_omp)
  set_target_properties(rewind_thrust_omp PROPERTIES EXPORT_NAME thrust_omp)
  target_link_libraries(rewind_thrust_omp INTERFACE rewind_core OpenMP::OpenMP_CXX)
  target_include_directories(rewind_thrust_omp SYSTEM INTERFACE "${REWIND_THRUST_INCLUDE_DIR}")
  target_compile_definitions(rewind_thrust_omp INTERFACE
    THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP)
endif()

# --- GPU: nvcc with the toolkit's CCCL ----------------------------------------------------------
if(REWIND_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  # Hopper (H100/H200) unless the user says otherwise; building needs no GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  # CMake 3.25 knows no C++20 flag for nvcc (Modules/Compiler/NVIDIA-CUDA.cmake stops at 17) and
  # refuses CUDA_STANDARD 20; nvcc 12 and later accept -std=c++20. Teach it, in this scope only.
  if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
     AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0
     AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  find_package(CUDAToolkit REQUIRED)

  # Which Thrust nvcc uses. CUDA 12+ ships Thrust/CUB/libcu++ (CCCL) under include/cccl, and
  # nvcc's own profile (bin/nvcc.profile) passes that directory with -isystem ahead of the host
  # compiler's system directories, so Debian's Thrust 1.x in /usr/include never shadows it: no
  # include flag is needed, and none must be added (-isystem /usr/include breaks libstdc++'s
  # #include_next; a -I/usr/include is ignored by the host compiler). CMake counts include/cccl
  # and /usr/include as implicit and drops them from targets. thrust_backend.hpp refuses a
  # Thrust 1.x under nvcc 12+ with an #error, so a wrong pick fails loudly.
  set(_rewind_cuda_thrust_header "")
  foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    foreach(_candidate "${_dir}/cccl/thrust/version.h" "${_dir}/thrust/version.h")  # 12+, 11
      if(NOT _rewind_cuda_thrust_header AND EXISTS "${_candidate}")
        set(_rewind_cuda_thrust_header "${_candidate}")
      endif()
    endforeach()
  endforeach()
  if(NOT _rewind_cuda_thrust_header)
    message(FATAL_ERROR "REWIND_WITH_CUDA is ON but the CUDA toolkit at "
                        "${CUDAToolkit_INCLUDE_DIRS} has no Thrust headers.")
  endif()
  _rewind_thrust_version("${_rewind_cuda_thrust_header}" REWIND_CUDA_THRUST_VERSION)
  message(STATUS "rewind: CUDA ${CUDAToolkit_VERSION} with Thrust ${REWIND_CUDA_THRUST_VERSION} "
                 "(${_rewind_cuda_thrust_header}), CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}")

  add_library(rewind_thrust_cuda INTERFACE)
  add_library(rewind::thrust_cuda ALIAS rewind_thrust_cuda)
  set_target_properties(rewind_thrust_cuda PROPERTIES EXPORT_NAME thrust_cuda)
  target_link_libraries(rewind_thrust_cuda INTERFACE rewind_core)
  target_compile_definitions(rewind_thrust_cuda INTERFACE
    THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CUDA)
  # nvcc's front end warns (#20012) on every defaulted special member of Eigen's dense storage,
  # a host header it reads for the device pass: about fifty lines per CUDA translation unit that
  # says nothing about rewind's code. Only that diagnostic is silenced, for every CUDA target.
  # --expt-relaxed-constexpr lets device code call constexpr host functions, as Eigen's CUDA
  # support expects (its complex division calls std::constexpr helpers; without the flag every
  # translation unit that includes Eigen prints warning #20015 for Eigen's own code).
  target_compile_options(rewind_thrust_cuda INTERFACE
    $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcudafe=--diag_suppress=20012>)
  # nvcc contracts a·b + c into one fused multiply-add by default: faster, and more accurate, but
  # CUDA results then differ from the CPU's in the last bits (still the same bits run after run).
  # OFF passes --fmad=false so that GPU and CPU results are equal bit for bit; REWIND_CUDA_FMAD
  # (1 or 0) tells the code and the tests which one was built.
  option(REWIND_CUDA_FMAD "Let nvcc fuse multiply-adds in device code (nvcc --fmad=true)" ON)
  if(REWIND_CUDA_FMAD)
    target_compile_options(rewind_thrust_cuda INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=true>)
    target_compile_definitions(rewind_thrust_cuda INTERFACE REWIND_CUDA_FMAD=1)
  else()
    target_compile_options(rewind_thrust_cuda INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
    target_compile_definitions(rewind_thrust_cuda INTERFACE REWIND_CUDA_FMAD=0)
  endif()
endif()
