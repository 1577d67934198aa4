#!/usr/bin/env bash
# The DLRM example end to end (examples/dlrm/README.md): sets everything up,
# builds ember-compile and ember-run, exports the PyTorch DLRM to ONNX with
# random inputs and torch's eager output, compiles it to a plan, runs the plan
# with a latency report, and compares outputs and latency with torch eager.
#
# Environment: BATCH (default 256); ARCH (dlrm, the default, or dcn: the
# DCN-v2 variant) and LOW_RANK (its cross layers' rank, 0 = full rank); THREADS (default 0 = one per core, for
# ember-run and torch alike); EMBER_SKIP_BUILD=1 with EMBER_BUILD_DIR=DIR
# reuses an existing build (default build/release, built here).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${EMBER_BUILD_DIR:-build/release}
if [[ "${EMBER_SKIP_BUILD:-0}" != 1 ]]; then
  bash scripts/setup.sh
  cmake --preset release >/dev/null
  cmake --build --preset release --target ember-compile ember-run
  build=build/release
fi

bin=$build/bin
work=$build/example-dlrm
batch=${BATCH:-256}
threads=${THREADS:-0}
# The same thread count for torch's OpenMP/OpenBLAS pools (otherwise one
# spinning thread per core, whatever torch.set_num_threads says).
nthreads=$threads
[[ $nthreads == 0 ]] && nthreads=$(nproc)
export OMP_NUM_THREADS=$nthreads OPENBLAS_NUM_THREADS=$nthreads
py=/usr/bin/python3 # torch 1.13 and numpy live here, not in pyenv's python3
rm -rf "$work"

echo "== exporting examples/dlrm (${ARCH:-dlrm}, batch $batch) to $work"
"$py" -W ignore examples/dlrm/export.py "$work" --batch "$batch" \
  --arch "${ARCH:-dlrm}" --low-rank "${LOW_RANK:-0}"

echo "== ember-compile"
# --max-batch: the plan accepts batches up to $batch and places every
# activation buffer in a static arena packed by lifetime (docs/plan-format.md).
"$bin/ember-compile" "$work/model.onnx" -o "$work/dlrm.plan" \
  --max-batch "$batch" --memory-stats
ls -l "$work/dlrm.plan" "$work/dlrm.rank0.weights"

echo "== ember-run"
"$bin/ember-run" "$work/dlrm.plan" --inputs "$work/inputs.npz" \
  --output-dir "$work/out" --warmup 10 --repeat 200 --threads "$threads" \
  --report-json "$work/latency.json"

echo "== outputs and latency vs torch eager"
"$py" examples/dlrm/compare.py "$work" --threads "$threads" --repeat 200 \
  --warmup 10
