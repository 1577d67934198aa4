#!/usr/bin/env bash
# Optional (not part of README's test command): runs the Python frontend's
# tests (tests/python, incl. export -> ember-compile -> ember-run) against
# PyTorch 2.x and TorchRec instead of Debian's PyTorch 1.13. Creates a venv
# in build/torch2-venv (about 3 GiB: PyPI's torch wheel bundles CUDA
# libraries) from PyPI; needs the release build for the e2e cases.
#
#   bash scripts/test-torch2.sh [TORCH_VERSION]      (default 2.5.1)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-2.5.1}"
venv=build/torch2-venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q "torch==$version" numpy onnx pytest
# TorchRec 1.0 pairs with torch 2.5 and FBGEMM 1.0; its own dependency pulls
# the CUDA FBGEMM, which is swapped for the CPU build.
if [ "$version" = 2.5.1 ]; then
  "$venv/bin/pip" install -q "torchrec==1.0.0"
  "$venv/bin/pip" uninstall -q -y fbgemm_gpu fbgemm_gpu-cpu || true
  "$venv/bin/pip" install -q --no-deps "fbgemm-gpu-cpu==1.0.0"
fi
"$venv/bin/python" -c "import torch; print('torch', torch.__version__)"
PYTHONPATH=compiler/frontends/torch:tests/python \
  EMBER_COMPILE=build/release/bin/ember-compile EMBER_RUN=build/release/bin/ember-run \
  "$venv/bin/python" -m pytest -q tests/python
