#!/usr/bin/env bash
# Sets everything up, builds Ember (release preset) and runs every test:
# unit (GoogleTest), lit (FileCheck) and the end-to-end/python tests, the latter
# also with PyTorch 2.14 + TorchRec 1.9 (ctest test `torchrec`, in the venv that
# scripts/setup-torchrec-venv.sh makes from PyPI: about 3 GB the first time, then
# reused). EMBER_TORCHREC=0 leaves that venv out (the test then reports itself skipped).
# Then the reliability stages (scripts/test-reliability.sh, docs/reliability.md):
# the runtime-side fuzz targets (corpus replay + a few seconds of fuzzing each)
# and the ThreadSanitizer concurrency test; EMBER_RELIABILITY=0 leaves them out.
# Before them the wheel stage (scripts/test-wheel.sh; EMBER_WHEEL=0 leaves it out).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# The TorchRec venv (PyPI downloads: network-bound) is made while Ember builds
# (CPU-bound); its log goes to build/torchrec-venv-setup.log.
venv_pid=""
if [ "${EMBER_TORCHREC:-1}" != 0 ]; then
  mkdir -p build
  bash scripts/setup-torchrec-venv.sh >build/torchrec-venv-setup.log 2>&1 &
  venv_pid=$!
  trap '[ -n "$venv_pid" ] && kill "$venv_pid" 2>/dev/null || true' EXIT
fi
cmake --preset release
cmake --build --preset release
if [ -n "$venv_pid" ]; then
  venv_status=0
  wait "$venv_pid" || venv_status=$?
  venv_pid=""
  cat build/torchrec-venv-setup.log
  if [ "$venv_status" != 0 ]; then
    echo "test-all: scripts/setup-torchrec-venv.sh failed (exit $venv_status)" >&2
    exit 1
  fi
fi
ctest --preset release --output-on-failure -j2
# The wheel: built from the release tree, installed into a fresh venv, the DLRM
# example run from it (docs/python.md); EMBER_WHEEL=0 leaves it out.
if [ "${EMBER_WHEEL:-1}" != 0 ]; then
  bash scripts/test-wheel.sh
fi
if [ "${EMBER_RELIABILITY:-1}" != 0 ]; then
  bash scripts/test-reliability.sh
fi
