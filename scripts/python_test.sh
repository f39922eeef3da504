#!/usr/bin/env bash
# Builds the Python package `rewind` (pyproject.toml, python/) into a virtual environment and runs
# its pytest suite (python/tests). Called by scripts/test.sh; on its own:
#   scripts/python_test.sh              # build/python-venv, the package, pytest
#   scripts/python_test.sh -k revolve   # arguments go to pytest
#   REWIND_PYTHON_TORCH=1 scripts/python_test.sh   # also PyTorch and torchdiffeq, for rewind.torch
# The environment is scripts/python_env.sh's. The package is installed without
# build isolation into a build folder that stays (build/python/, pyproject.toml's build-dir):
# a second run downloads nothing and recompiles only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
bash scripts/python_env.sh >/dev/null
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# REWIND_SCHEDULE_LIBRARY (set by scripts/test.sh): the schedule part as the C++ build of this
# tree has just compiled it, linked instead of compiled again. Always passed, empty when unset,
# so that the build folder never keeps a library from an earlier run.
schedule_library=""
if [[ -n ${REWIND_SCHEDULE_LIBRARY:-} ]]; then
  schedule_library=$(realpath "$REWIND_SCHEDULE_LIBRARY")
fi
# REWIND_COMMANDS_DIR: where the C++ build wrote rewind._commands (the command line inside Python:
# rewind.run, rewind.fit, …), by default build/python-commands when it is there; installed into
# the package from it. Without it the package has the schedules alone and the tests of
# rewind.run and the others skip themselves — unless REWIND_PYTHON_REQUIRE_COMMANDS is set
# (scripts/test.sh sets it), where they fail instead.
commands_dir=${REWIND_COMMANDS_DIR-build/python-commands}
if [[ -n $commands_dir && -f $commands_dir/_commands.pyi ]]; then
  commands_dir=$(realpath "$commands_dir")
else
  commands_dir=""
fi
config=(--config-settings=cmake.define.REWIND_SCHEDULE_LIBRARY="$schedule_library"
        --config-settings=cmake.define.REWIND_COMMANDS_DIR="$commands_dir")
if command -v ccache >/dev/null; then
  config+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps "${config[@]}" .
# Run from python/tests, so that the installed package is imported, not the source folder (and
# without pytest's cache folder, which would land at the repository root).
cd python/tests
exec "../../$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
