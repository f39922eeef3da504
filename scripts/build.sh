#!/usr/bin/env bash
# Configures and builds rewind (Release) into ./build, installing missing Debian packages first.
# Extra arguments go to the CMake configure step, e.g. scripts/build.sh -DREWIND_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
