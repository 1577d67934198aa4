#!/usr/bin/env bash
# The DLRM example (examples/dlrm) on the CPU: ember-run against PyTorch eager
# on the same inputs, in one run, with and without the compiler's memory plan.
#
# usage: bench/dlrm_vs_pytorch.sh BUILD_DIR [BATCH] [THREADS]
#   BUILD_DIR  has bin/ember-compile and bin/ember-run
#   BATCH      default 256; THREADS default 0 (one per core, both sides)
#
# Exports the model with torch.onnx.export, compiles it twice
# (--max-batch BATCH: batch-sized buffers at fixed offsets of a static arena;
# --no-memory-plan: every buffer from the runtime's dynamic arena), times
# ember-run on both plans (median of 200 runs after 10 warmups), and
# examples/dlrm/compare.py checks the outputs and times torch eager the same
# way. Prints compile time, arena bytes and medians.
set -euo pipefail
build=${1:?usage: dlrm_vs_pytorch.sh BUILD_DIR [BATCH] [THREADS]}
batch=${2:-256}
threads=${3:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
# Both sides get the same thread count through the environment too: torch
# 1.13's OpenMP and OpenBLAS pools otherwise start one spinning thread per
# core whatever torch.set_num_threads says, which on a busy machine made
# eager runs 100x slower (docs/performance.md).
n=$threads
[[ $n == 0 ]] && n=$(nproc)
export OMP_NUM_THREADS=$n OPENBLAS_NUM_THREADS=$n
py=/usr/bin/python3
work=$(mktemp -d -t ember-dlrm-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

"$py" -W ignore "$here/examples/dlrm/export.py" "$work" --batch "$batch" >/dev/null

compile() { # NAME FLAGS...
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$build/bin/ember-compile" "$work/model.onnx" -o "$work/$name.plan" "$@"
  end=$(date +%s.%N)
  printf "ember-compile %s: %.3f s\n" "$name" "$(echo "$end - $start" | bc)"
}
compile planned --max-batch "$batch" --memory-stats
compile dynamic --no-memory-plan

run() { # NAME
  "$build/bin/ember-run" "$work/$1.plan" --inputs "$work/inputs.npz" \
    --output-dir "$work/out" --warmup 10 --repeat 200 --threads "$threads" \
    --report-json "$work/$1.json" >/dev/null
  "$py" -c "import json,sys; r=json.load(open(sys.argv[1])); \
print('ember-run %-8s median %.3f ms, arena_bytes %d' % (sys.argv[2], \
r['latency_ms']['median'], r['arena_bytes']))" "$work/$1.json" "$1"
}
run dynamic
run planned
cp "$work/planned.json" "$work/latency.json"
"$py" -W ignore "$here/examples/dlrm/compare.py" "$work" --threads "$threads" \
  --repeat 200 --warmup 10
