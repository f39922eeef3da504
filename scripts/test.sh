#!/usr/bin/env bash
# Installs what is missing, builds everything (Release) and runs the whole default test suite
# through ctest, then the Python package's (scripts/python_test.sh: build/python-venv, pytest).
# Arguments go to scripts/build.sh (CMake options, then --target …).
# Long sweeps are opt-in: ctest --test-dir build -L long.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python environment comes first: its nanobind builds rewind._commands (the command line
# inside Python) with the C++ tree, which has the libraries it links.
bash scripts/install_dependencies.sh
python=$(bash scripts/python_env.sh)
bash scripts/build.sh -DREWIND_PYTHON="$python" "$@"
ctest --test-dir build --output-on-failure -LE long -j"$(nproc)"
# The Python package links the schedule part this build compiled (brought up to date first, in
# case the build above was limited to other targets) rather than compiling it again — unless the
# build is sanitized: a Python process does not load the sanitizers' runtime.
# So does rewind._commands, which the tests then require (a sanitized build makes none).
schedule_library=""
commands_dir=""
if grep -qx 'REWIND_SANITIZE:STRING=' build/CMakeCache.txt; then
  cmake --build build --target rewind_schedule _commands_stub
  schedule_library=build/checkpoint/schedule/librewind_schedule.a
  commands_dir=build/python-commands
fi
REWIND_SCHEDULE_LIBRARY=$schedule_library REWIND_COMMANDS_DIR=$commands_dir \
  REWIND_PYTHON_REQUIRE_COMMANDS=${commands_dir:+1} bash scripts/python_test.sh
