#!/usr/bin/env bash
# Installs what is missing, builds everything (Release) and runs the whole default test suite
# through ctest, then the Python package's (scripts/python_test.sh: build/python-venv, pytest).
# Long sweeps are opt-in: ctest --test-dir build -L long.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -LE long -j"$(nproc)"
# The Python package links the schedule part this build compiled (brought up to date first, in
# case the build above was limited to other targets) rather than compiling it again — unless the
# build is sanitized: a Python process does not load the sanitizers' runtime.
schedule_library=""
if grep -qx 'REWIND_SANITIZE:STRING=' build/CMakeCache.txt; then
  cmake --build build --target rewind_schedule
  schedule_library=build/checkpoint/schedule/librewind_schedule.a
fi
REWIND_SCHEDULE_LIBRARY=$schedule_library bash scripts/python_test.sh
