#!/usr/bin/env bash
# The Python environment the package is built and tested in: build/python-venv, Debian's Python
# (/usr/bin/python3, with python3-venv and python3-dev) with its system packages visible (Debian's
# NumPy), and from PyPI the build requirements and test tools at python/requirements-test.txt's
# versions (nanobind among them, which the C++ build's rewind._commands needs too, so
# scripts/test.sh calls this before it builds). Idempotent: a second run downloads nothing.
#   scripts/python_env.sh                          # prints the environment's python
#   REWIND_PYTHON_TORCH=1 scripts/python_env.sh    # also PyTorch and torchdiffeq (rewind.torch)
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
echo "$PWD/$venv/bin/python"
