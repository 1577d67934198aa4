#!/usr/bin/env bash
# Sets everything up, builds Ember (release preset) and runs every test:
# unit (GoogleTest), lit (FileCheck) and the end-to-end/python tests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release
cmake --build --preset release
ctest --preset release --output-on-failure -j2
