#!/usr/bin/env bash
# The DLRM example on one GPU: ember-run --device cuda against PyTorch eager
# on the same GPU and inputs, in one run (issue 7's end-to-end target: at
# least 2x torch eager).
#
# GPU hosts usually have CUDA and PyTorch but not MLIR or protobuf, so the
# work is split in two steps:
#
#   [ARCH=dcn] bench/gpu/dlrm_cuda_vs_pytorch.sh prepare BUILD_DIR WORKDIR [BATCH]
#       (on the development machine) exports examples/dlrm (ARCH dlrm, the
#       default, or dcn) with random inputs and torch's CPU output, compiles
#       it with --target cuda.
#   bench/gpu/dlrm_cuda_vs_pytorch.sh run BUILD_DIR WORKDIR [DEVICE]
#       (on the GPU host, with the same build's ember-run) runs the plan on
#       DEVICE (default cuda:0) and examples/dlrm/compare.py --device DEVICE,
#       which checks the outputs against torch's (rtol 1e-5) and times torch
#       eager on the GPU the same way (inputs copied in, output copied out,
#       median of 200 runs after 20 warmups). EMBER_RUN_FLAGS adds flags
#       to ember-run (e.g. --cuda-graphs); TORCH_COMPILE=MODE also times
#       torch.compile(model, mode=MODE) (e.g. reduce-overhead: CUDA graphs).
set -euo pipefail
step=${1:?usage: dlrm_cuda_vs_pytorch.sh prepare|run BUILD_DIR WORKDIR [BATCH|DEVICE]}
build=${2:?BUILD_DIR}
work=${3:?WORKDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
case "$step" in
prepare)
  batch=${4:-2048}
  mkdir -p "$work"
  /usr/bin/python3 -W ignore "$here/examples/dlrm/export.py" "$work" --batch "$batch" \
    --arch "${ARCH:-dlrm}"
  "$build/bin/ember-compile" "$work/model.onnx" -o "$work/dlrm.plan" \
    --target cuda --max-batch "$batch"
  echo "prepared $work (batch $batch); copy it and the build's bin/ to the GPU host"
  ;;
run)
  device=${4:-cuda:0}
  "$build/bin/ember-run" "$work/dlrm.plan" --inputs "$work/inputs.npz" \
    --device "$device" --verbose --output-dir "$work/out" --warmup 20 \
    --repeat 200 --report-json "$work/latency.json" ${EMBER_RUN_FLAGS:-}
  "$py" "$here/examples/dlrm/compare.py" "$work" --device "$device" \
    --repeat 200 --warmup 20 ${TORCH_COMPILE:+--compile "$TORCH_COMPILE"}
  ;;
*)
  echo "unknown step '$step': prepare or run" >&2
  exit 2
  ;;
esac
