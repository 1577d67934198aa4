#!/usr/bin/env bash
# Everything the CUDA backend owes a GPU, in one run: for the first session
# (or person) with a GPU. Runs on the GPU host from a build made elsewhere
# (the device machine has no MLIR or protobuf): it calls the test and bench
# binaries directly, not ctest, so the build directory may have moved.
#
#   bash scripts/gpu-check.sh [BUILD_DIR] [OUT_DIR]
#     BUILD_DIR  default build/release (bin/gpu_*_test, bin/ember-run,
#                bin/ember_tbe_bench, bin/ember-make-test-plan), or a
#                bundle made by scripts/gpu-bundle.sh (bin/ and lib/)
#     OUT_DIR    default gpu-check-out: one log per step and summary.txt
#
# Steps: nvidia-smi; every GPU test binary (gpu_*_test, without the
# emulation tests, which run everywhere); ember-run --device cuda on the
# test DLRM against its reference; the TBE benchmark's three standard cases
# (FBGEMM's shape and D=128 fp32/fp16, with the device copy bandwidth
# measured in the same run); tbe_vs_pytorch.py and the DLRM example against
# torch eager when PyTorch with CUDA is importable. Figures belong in
# docs/performance.md with the GPU model and the date.
# Exit status: 0 when every test passed, 1 otherwise, 2 without a GPU.
set -u
build=${1:-build/release}
out=${2:-gpu-check-out}
bin=$build/bin
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# Libraries: the bundle's lib/, then CUDA's, then the CUDA libraries of
# PyTorch's wheels (nvidia-nccl, nvidia-cublas, ...) where the host has them.
libs="$build/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib"
wheels=$(python3 -c "import nvidia, os; r = list(nvidia.__path__)[0]; print(':'.join(os.path.join(r, d, 'lib') for d in sorted(os.listdir(r)) if os.path.isdir(os.path.join(r, d, 'lib'))))" 2>/dev/null || true)
[ -n "$wheels" ] && libs="$libs:$wheels"
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
summary=$out/summary.txt
: >"$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
step() { # NAME COMMAND...: runs it, logs it, notes pass/fail
  local name=$1; shift
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then note "PASS $name"; else note "FAIL $name (exit $rc, $out/$name.log)"; status=1; fi
  return $rc
}

if ! nvidia-smi >"$out/nvidia-smi.log" 2>&1; then
  note "no GPU: nvidia-smi failed ($(head -1 "$out/nvidia-smi.log"))"
  # GPU_CHECK_DRY_RUN=1 goes on, to check this script itself.
  [ "${GPU_CHECK_DRY_RUN:-0}" = 1 ] || exit 2
else
  note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
fi

# GPU_CHECK_SANITIZE=memcheck (or racecheck, initcheck, synccheck; several
# with commas) instead runs every GPU test binary and ember-run on the test
# DLRM under compute-sanitizer with that tool (an error it reports fails
# the step; GPU_CHECK_TIMEOUT seconds per binary, default 300) and stops.
if [ -n "${GPU_CHECK_SANITIZE:-}" ]; then
  sanitizer=$(command -v compute-sanitizer ||
    ls /usr/local/cuda/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
  if [ -z "$sanitizer" ]; then
    note "FAIL no compute-sanitizer on this host"
    exit 1
  fi
  for tool in ${GPU_CHECK_SANITIZE//,/ }; do
    for t in "$bin"/gpu_*_test; do
      case $t in *_emulation_test) continue ;; esac
      step "$tool-$(basename "$t")" timeout "${GPU_CHECK_TIMEOUT:-300}" \
        "$sanitizer" --tool "$tool" --error-exitcode 9 "$t" --gtest_brief=1
    done
    work=$out/dlrm-$tool
    mkdir -p "$work"
    if "$bin/ember-make-test-plan" "$work" 64 >"$out/make-test-plan-$tool.log" 2>&1; then
      cp "$work/dlrm.plan.txt" "$work/dlrm_cuda.plan.txt"
      echo "target: TARGET_CUDA" >>"$work/dlrm_cuda.plan.txt"
      step "$tool-ember-run" timeout "${GPU_CHECK_TIMEOUT:-300}" "$sanitizer" --tool "$tool" \
        --error-exitcode 9 "$bin/ember-run" "$work/dlrm_cuda.plan.txt" \
        --inputs "$work/inputs.npz" --device cuda --repeat 2
      step "$tool-ember-run-cuda-graphs" timeout "${GPU_CHECK_TIMEOUT:-300}" "$sanitizer" \
        --tool "$tool" --error-exitcode 9 "$bin/ember-run" "$work/dlrm_cuda.plan.txt" \
        --inputs "$work/inputs.npz" --device cuda --cuda-graphs --repeat 3
    else
      note "FAIL ember-make-test-plan ($out/make-test-plan-$tool.log)"; status=1
    fi
  done
  note "done: $( [ $status -eq 0 ] && echo all passed || echo some failed )"
  exit $status
fi

for t in "$bin"/gpu_*_test; do
  case $t in *_emulation_test) continue ;; esac
  step "$(basename "$t")" timeout 120 "$t" --gtest_brief=1
  if grep -q "SKIPPED" "$out/$(basename "$t").log"; then
    note "  (some tests of $(basename "$t") skipped: $(grep -m1 -o 'no GPU.*' "$out/$(basename "$t").log" || echo see the log))"
  fi
done

work=$out/dlrm
mkdir -p "$work"
if "$bin/ember-make-test-plan" "$work" 64 >"$out/make-test-plan.log" 2>&1; then
  cp "$work/dlrm.plan.txt" "$work/dlrm_cuda.plan.txt"
  echo "target: TARGET_CUDA" >>"$work/dlrm_cuda.plan.txt"
  step ember-run-device-cuda "$bin/ember-run" "$work/dlrm_cuda.plan.txt" \
    --inputs "$work/inputs.npz" --device cuda --verbose --output-dir "$work/out" \
    --warmup 10 --repeat 100 &&
    step ember-run-output-matches "$bin/ember-make-test-plan" --compare \
      "$work/out/prob.npy" "$work/expected_prob.npy"
  step ember-run-cuda-graphs "$bin/ember-run" "$work/dlrm_cuda.plan.txt" \
    --inputs "$work/inputs.npz" --device cuda --cuda-graphs --warmup 10 --repeat 100
else
  note "FAIL ember-make-test-plan ($out/make-test-plan.log)"; status=1
fi

if [ -x "$bin/ember_tbe_bench" ]; then
  step tbe-bench "$bin/ember_tbe_bench" && grep -E "GB/s|copy" "$out/tbe-bench.log" | tee -a "$summary"
  # The lookup's sub-warp shapes (lanes x chunks per lane) side by side on
  # the same inputs: what the kernel's default choice should be.
  step tbe-shapes bash -c "'$bin/ember_tbe_bench' --case fbgemm --shapes auto,32x1,16x2,8x3,8x4 &&
    '$bin/ember_tbe_bench' --case d128-fp32 --shapes auto,32x1,16x2,8x4 &&
    '$bin/ember_tbe_bench' --case d128-fp16 --shapes auto,16x1,8x2,4x4 &&
    '$bin/ember_tbe_bench' --dim 128 --format int8 --shapes auto,16x1,8x2 &&
    for b in 512 4096 16384; do '$bin/ember_tbe_bench' --dim 128 --format fp32 --batch \$b --shapes auto,32x1,16x2,8x4 || exit 1; done" &&
    grep "shape=" "$out/tbe-shapes.log" | sed 's/ tables=[0-9]* rows=[0-9]*//; s/ memcpy_GBps=[0-9.]*//' | tee -a "$summary"
fi

if python3 -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
  step tbe-vs-pytorch python3 "$here/bench/gpu/tbe_vs_pytorch.py" --build "$build" &&
    tail -5 "$out/tbe-vs-pytorch.log" | tee -a "$summary"
  step tbe-vs-pytorch-d128-fp32 python3 "$here/bench/gpu/tbe_vs_pytorch.py" --build "$build" \
    --dim 128 --format fp32 && tail -5 "$out/tbe-vs-pytorch-d128-fp32.log" | tee -a "$summary"
  for arch in dlrm dcn; do
    work_dir=$build/$arch-work
    if [ -f "$work_dir/dlrm.plan" ]; then
      step "$arch-vs-torch-eager" bash "$here/bench/gpu/dlrm_cuda_vs_pytorch.sh" run "$build" "$work_dir" &&
        tail -1 "$out/$arch-vs-torch-eager.log" | tee -a "$summary"
      # CUDA graphs on both sides: ember-run --cuda-graphs against
      # torch.compile's reduce-overhead mode (its compilation is not timed).
      EMBER_RUN_FLAGS=--cuda-graphs TORCH_COMPILE=reduce-overhead \
        step "$arch-graphs-vs-torch-compile" timeout 200 bash "$here/bench/gpu/dlrm_cuda_vs_pytorch.sh" run "$build" "$work_dir" &&
        tail -1 "$out/$arch-graphs-vs-torch-compile.log" | tee -a "$summary"
    else
      note "skip $arch-vs-torch: no $work_dir (scripts/gpu-bundle.sh prepares it where ember-compile runs)"
    fi
  done
else
  note "skip the PyTorch comparisons: no torch with CUDA for python3"
fi
# Where the DLRM example's GPU time goes: Nsight Compute's per-kernel
# durations over 10 runs (kernels serialized, so launch gaps are not in it).
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
if [ -n "$ncu_bin" ] && [ -f "$build/dlrm-work/dlrm.plan" ]; then
  step dlrm-kernels timeout 150 "$ncu_bin" --metrics gpu__time_duration.sum \
    --print-summary per-kernel "$bin/ember-run" "$build/dlrm-work/dlrm.plan" \
    --inputs "$build/dlrm-work/inputs.npz" --device cuda --warmup 0 --repeat 10
fi
note "done: $( [ $status -eq 0 ] && echo all passed || echo some failed )"
exit $status
