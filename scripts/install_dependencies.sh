#!/usr/bin/env bash
# Installs the Debian packages rewind builds against. Idempotent: packages that are
# already present are skipped, and apt is only touched when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  ninja-build            # the build tool scripts/build.sh configures a new build folder for
  libeigen3-dev          # CPU vector backend, dense linear algebra
  libthrust-dev          # Thrust backend (CPP/OMP device systems on the CPU)
  libsundials-dev        # BDF through CVODES
  liblapack-dev          # band LU for CVODES's Newton iterations (dgbtrf/dgbtrs)
  libsuitesparse-dev     # KLU, the sparse LU behind CVODES's sparse solver (SUNLinSol_KLU) for
                         # problems that give their sparse Jacobian (stencil models); optional
  libhdf5-dev hdf5-tools # snapshot files, h5dump
  libopenmpi-dev openmpi-bin  # MPI ranks (rewind::distributed; tests run on loopback)
  libhdf5-openmpi-dev    # parallel HDF5 for snapshot files written by every rank
  libxxhash-dev          # XXH3 checksums of snapshots (header-only use)
  librandom123-dev       # Philox4x32-10 keyed noise for the stochastic steppers (header-only)
  libgtest-dev googletest libgmock-dev
  libbenchmark-dev       # Google Benchmark
  libcli11-dev           # command-line parsing for the rewind tool
  clang-format           # the format_check test keeps the tree in .clang-format
  doxygen                # the API reference (cmake --build build --target docs; ctest -L docs)
  nlohmann-json3-dev     # JSON reports
  libnlopt-cxx-dev       # NLopt (C++ header, L-BFGS with bounds) for fitting parameters to observations
  libtrilinos-sacado-dev # Sacado: forward-mode AD (SFad) that derives the vjps of rewind/model.hpp
  libadolc-dev           # ADOL-C: measured against Sacado (bench/ad_choice, bench/results/ad_choice.md)
  python3 python3-numpy python3-matplotlib  # plots from the JSON reports
  python3-dev python3-venv  # the Python package (scripts/python_test.sh: its build and tests)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "rewind: all dependencies present"
  exit 0
fi

echo "rewind: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
