#!/usr/bin/env bash
# Configures and builds rewind (Release) into ./build, installing missing Debian packages first.
#   scripts/build.sh                                  # everything: library, tool, examples, tests
#   scripts/build.sh --target rewind_cli pendulum_gradient   # only these targets (and what they need)
#   scripts/build.sh -DREWIND_WITH_CUDA=OFF           # arguments before --target go to CMake's
#                                                     # configure step
set -euo pipefail
cd "$(dirname "$0")/.."
configure=()
targets=()
while (($#)); do
  if [[ $1 == --target ]]; then
    shift
    targets=("$@")
    break
  fi
  configure+=("$1")
  shift
done
bash scripts/install_dependencies.sh
# ccache, where installed, makes a rebuild after a checkout of another commit cheap.
launcher=()
if command -v ccache >/dev/null && [[ ! -f build/CMakeCache.txt ]]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# A new build folder is made for Ninja, which schedules the whole build's compiles at once (no
# recursive make per target); a folder configured before keeps its generator.
generator=()
if command -v ninja >/dev/null && [[ ! -f build/CMakeCache.txt ]]; then
  generator=(-G Ninja)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${generator[@]}" "${launcher[@]}" "${configure[@]}"
if ((${#targets[@]})); then
  cmake --build build -j"$(nproc)" --target "${targets[@]}"
else
  cmake --build build -j"$(nproc)"
fi
