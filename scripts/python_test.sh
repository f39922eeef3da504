#!/usr/bin/env bash
# Builds the Python package `rewind` (pyproject.toml, python/) into a virtual environment and runs
# its pytest suite (python/tests). Called by scripts/test.sh; on its own:
#   scripts/python_test.sh              # build/python-venv, the package, pytest
#   scripts/python_test.sh -k revolve   # arguments go to pytest
#   REWIND_PYTHON_TORCH=1 scripts/python_test.sh   # also PyTorch and torchdiffeq, for rewind.torch
# The environment is Debian's Python (/usr/bin/python3, with python3-venv and python3-dev) with
# its system packages visible (Debian's NumPy); the build requirements and the test tools come
# from PyPI at the versions in python/requirements-test.txt. The package is installed without
# build isolation into a build folder that stays (build/python/, pyproject.toml's build-dir):
# a second run downloads nothing and recompiles only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
venv=build/python-venv
if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv --system-site-packages "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r python/requirements-test.txt
# rewind.torch's tests (python/tests/test_torch.py) skip themselves without PyTorch; asked for,
# PyTorch and torchdiffeq come from PyPI at python/requirements-torch.txt's versions (PyPI's
# PyTorch brings NVIDIA's CUDA libraries: gigabytes, so never by default).
if [[ -n ${REWIND_PYTHON_TORCH:-} ]]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r python/requirements-torch.txt
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# REWIND_SCHEDULE_LIBRARY (set by scripts/test.sh): the schedule part as the C++ build of this
# tree has just compiled it, linked instead of compiled again. Always passed, empty when unset,
# so that the build folder never keeps a library from an earlier run.
schedule_library=""
if [[ -n ${REWIND_SCHEDULE_LIBRARY:-} ]]; then
  schedule_library=$(realpath "$REWIND_SCHEDULE_LIBRARY")
fi
config=(--config-settings=cmake.define.REWIND_SCHEDULE_LIBRARY="$schedule_library")
if command -v ccache >/dev/null; then
  config+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps "${config[@]}" .
# Run from python/tests, so that the installed package is imported, not the source folder (and
# without pytest's cache folder, which would land at the repository root).
cd python/tests
exec "../../$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
