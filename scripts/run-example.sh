#!/usr/bin/env bash
# Sets everything up, builds Ember and runs the main job: a small DLRM plan
# (dense MLP, three embedding tables through the grouped lookup, dot
# interaction, top MLP) executed by ember-run on the CPU, checked against a
# plain-loop reference, with a latency report.
#
# Until ember-compile lands, the plan is written by ember-make-test-plan (the
# plan builder the runtime's tests use) instead of being compiled from the
# PyTorch model.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target ember-run ember-make-test-plan

bin=build/release/bin
work=build/release/example-dlrm
rm -rf "$work"
batch=${BATCH:-256}

echo "== writing a small DLRM plan (batch $batch) to $work"
"$bin/ember-make-test-plan" "$work" "$batch"

echo "== ember-run"
"$bin/ember-run" "$work/dlrm.plan" --inputs "$work/inputs.npz" \
  --output-dir "$work/out" --warmup 10 --repeat 200 --threads 0 \
  --report-json "$work/latency.json"

echo "== outputs vs the reference"
"$bin/ember-make-test-plan" --compare "$work/out/prob.npy" "$work/expected_prob.npy"
/usr/bin/python3 - "$work/out/prob.npy" <<'PY' 2>/dev/null || true
import sys, numpy as np
p = np.load(sys.argv[1])
print("predictions[:8] =", np.array2string(p.reshape(-1)[:8], precision=4))
PY
