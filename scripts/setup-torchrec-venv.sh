#!/usr/bin/env bash
# Creates build/torchrec-venv: PyTorch 2.14.1, TorchRec 1.9.2 and FBGEMM 1.9.0 (CPU) from
# PyPI, with Debian's /usr/bin/python3, for the ctest test `torchrec` (tests/python run
# with PyTorch 2.x, TorchRec's stock models exported, compiled and run by Ember).
# Every package is pinned (the constraints below). Idempotent: a venv made from the same
# pins is left as it is; changed pins rebuild it. About 3 GB downloaded (PyPI's torch
# wheel pulls CUDA libraries), 5.6 GB on disk.
#
#   bash scripts/setup-torchrec-venv.sh [--force]
#
# Then:  build/torchrec-venv/bin/python -m pytest -q tests/python   (PYTHONPATH as in README)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/torchrec-venv

# pip freeze of a working venv (2026-11-26). torchrec's metadata requires the CUDA
# fbgemm-gpu: torchrec's other needs are installed, then torchrec and fbgemm-gpu-cpu with
# --no-deps. torch >= 2.9's default torch.onnx.export needs onnxscript; ember.export
# writes ONNX itself and does not. tqdm (also a need of torchrec's) draws ember.export's
# progress bars.
pins="$(cat <<'EOF'
torch==2.14.1
torchrec==1.9.2
fbgemm-gpu-cpu==1.9.0
onnx==1.23.2
onnxruntime==1.32.0
numpy==2.4.6
pytest==9.2.0
tensordict==0.15.3
torchmetrics==1.0.3
tqdm==4.70.1
pyre-extensions==0.0.32
cloudpickle==3.1.3
cuda-bindings==13.5.0
cuda-pathfinder==1.9.1
cuda-toolkit==13.0.3.0
filelock==4.3.1
flatbuffers==25.12.19
fsspec==2026.9.0
iniconfig==2.3.1
jinja2==3.1.6
lightning-utilities==0.15.3
markupsafe==3.0.4
ml-dtypes==0.6.0
mpmath==1.3.0
mypy-extensions==1.2.0
networkx==3.6.1
nvidia-cublas==13.1.1.3
nvidia-cuda-cupti==13.0.85
nvidia-cuda-nvrtc==13.0.88
nvidia-cuda-runtime==13.0.96
nvidia-cudnn-cu13==9.24.0.43
nvidia-cufft==12.0.0.61
nvidia-cufile==1.15.1.6
nvidia-curand==10.4.0.35
nvidia-cusolver==12.0.4.66
nvidia-cusparse==12.6.3.3
nvidia-cusparselt-cu13==0.8.1
nvidia-nccl-cu13==2.30.7
nvidia-nvjitlink==13.5.37
nvidia-nvshmem-cu13==3.4.5
nvidia-nvtx==13.0.85
packaging==26.4
pluggy==1.7.0
protobuf==7.36.2
pygments==2.21.0
pyvers==0.2.3
setuptools==84.2.1
sympy==1.14.0
triton==3.8.0
typing-extensions==4.16.0
typing-inspect==0.9.0
EOF
)"

stamp="$venv/.ember-pins"
check='import torch, torchrec, fbgemm_gpu, onnx, onnxruntime, numpy, pytest, tqdm'
if [ "${1:-}" != --force ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pins" ] \
    && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup-torchrec-venv: $venv is up to date ($(grep -E '^(torch|torchrec)==' "$stamp" | tr '\n' ' '))"
  exit 0
fi

if [ ! -x /usr/bin/python3 ]; then
  echo "setup-torchrec-venv: /usr/bin/python3 is missing (run scripts/setup.sh)" >&2
  exit 1
fi
echo "setup-torchrec-venv: creating $venv from PyPI (about 3 GB, a few minutes)"
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
constraints="$venv/constraints.txt"
printf '%s\n' "$pins" > "$constraints"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check --no-input)
pin() { grep -E "^$1==" "$constraints"; }

"${pip[@]}" -c "$constraints" "$(pin torch)" "$(pin numpy)" "$(pin onnx)" \
  "$(pin onnxruntime)" "$(pin pytest)"
# TorchRec's own needs first, so that pip does not report torchrec's missing fbgemm-gpu.
"${pip[@]}" -c "$constraints" "$(pin tensordict)" "$(pin torchmetrics)" "$(pin tqdm)" \
  "$(pin pyre-extensions)"
"${pip[@]}" --no-deps "$(pin torchrec)" "$(pin fbgemm-gpu-cpu)"

# Everything installed must be pinned: a package missing above would float.
unpinned="$("$venv/bin/python" -m pip list --format=freeze --disable-pip-version-check \
  | tr 'A-Z_' 'a-z-' | sed 's/==.*//' | grep -vxF -e pip -f <(sed 's/==.*//' "$constraints") || true)"
if [ -n "$unpinned" ]; then
  echo "setup-torchrec-venv: installed but not pinned: $unpinned" >&2
  exit 1
fi
"$venv/bin/python" -c "$check; print('setup-torchrec-venv: torch', torch.__version__, 'works')"
printf '%s\n' "$pins" > "$stamp"
