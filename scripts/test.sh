#!/usr/bin/env bash
# Installs what is missing, builds everything (Release) and runs the whole default test suite
# through ctest, then the Python package's (scripts/python_test.sh: build/python-venv, pytest).
# Long sweeps are opt-in: ctest --test-dir build -L long.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -LE long -j"$(nproc)"
bash scripts/python_test.sh
