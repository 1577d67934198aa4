#!/usr/bin/env bash
# End-to-end tests of ember-run on the test DLRM written by
# ember-make-test-plan. Usage: ember_run_test.sh CASE EMBER_RUN MAKE_PLAN WORKDIR
# Exit 0 pass, 1 fail, 77 skipped.
set -u
case_name=$1 run=$2 make_plan=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 1
"$make_plan" "$work" 16 || { echo "FAIL: cannot write the test plan"; exit 1; }
out=$work/out
fail() { echo "FAIL ($case_name): $*"; exit 1; }
# expect_failure CODE FRAGMENT -- ARGS...: ember-run exits CODE, stderr has
# FRAGMENT and no output file was written.
expect_failure() {
  local code=$1 fragment=$2; shift 3
  "$run" "$@" --output-dir "$out" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  cat "$work/stderr"
  [ $rc -eq "$code" ] || fail "exit status $rc, expected $code"
  grep -qF -- "$fragment" "$work/stderr" || fail "stderr lacks '$fragment'"
  if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then fail "outputs left behind: $(ls "$out")"; fi
  echo "PASS ($case_name)"; exit 0
}
check_prob() {
  "$make_plan" --compare "$out/prob.npy" "$work/expected_prob.npy" || fail "prob differs"
}

case $case_name in
npz_inputs)
  "$run" "$work/dlrm.plan" --inputs "$work/inputs.npz" --output-dir "$out" || fail "ember-run failed"
  check_prob ;;
npy_inputs)
  "$run" "$work/dlrm.plan" --input dense="$work/dense.npy" \
    --input sparse.values="$work/sparse_values.npy" \
    --input=sparse.lengths="$work/sparse_lengths.npy" --output-dir "$out" || fail "ember-run failed"
  check_prob ;;
text_plan_threads)
  "$run" "$work/dlrm.plan.txt" --inputs "$work/inputs.npz" --threads 2 --output-dir "$out" \
    || fail "ember-run failed"
  check_prob ;;
repeat_report)
  "$run" "$work/dlrm.plan" --inputs "$work/inputs.npz" --warmup 2 --repeat 20 \
    --report-json "$work/report.json" --output-dir "$out" >"$work/stdout" || fail "ember-run failed"
  cat "$work/stdout"
  grep -q "p99" "$work/stdout" || fail "no latency line"
  for key in '"median"' '"p90"' '"p99"' '"throughput_samples_per_s"' '"cpu_ms_per_run"' '"batch_size": 16' '"repeat": 20'; do
    grep -qF "$key" "$work/report.json" || fail "report lacks $key"
  done
  if command -v /usr/bin/python3 >/dev/null; then
    /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['latency_ms']['min'] <= r['latency_ms']['median'] <= r['latency_ms']['p99']; assert 0 < r['cpu_ms_per_run'] < 10 * r['latency_ms']['max'] + 50, r['cpu_ms_per_run']" \
      "$work/report.json" || fail "report is not valid JSON or inconsistent"
  fi
  check_prob ;;
numpy_interop)
  # Inputs written by NumPy itself (savez_compressed: deflated entries) and
  # the output read back by NumPy.
  /usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "SKIP: no numpy"; exit 77; }
  /usr/bin/python3 - "$work" <<'PY' || fail "numpy could not prepare the inputs"
import sys, numpy as np
w = sys.argv[1]
z = np.load(w + "/inputs.npz")
np.savez_compressed(w + "/numpy_inputs.npz", dense=z["dense"],
                    **{"sparse.values": z["sparse.values"].astype(np.int64),
                       "sparse.lengths": z["sparse.lengths"]})
PY
  "$run" "$work/dlrm.plan" --inputs "$work/numpy_inputs.npz" --output-dir "$out" || fail "ember-run failed"
  check_prob
  /usr/bin/python3 -c "import numpy as np,sys; a=np.load(sys.argv[1]); e=np.load(sys.argv[2]); assert a.shape==(16,1) and np.allclose(a,e,atol=1e-5)" \
    "$out/prob.npy" "$work/expected_prob.npy" || fail "numpy disagrees with the output" ;;
device_cuda)
  # The plan retargeted to CUDA (text format), run on the GPU; skips without one.
  cp "$work/dlrm.plan.txt" "$work/dlrm_cuda.plan.txt" && echo "target: TARGET_CUDA" >>"$work/dlrm_cuda.plan.txt"
  cp "$work/dlrm.rank0.weights" "$work/dlrm_cuda.rank0.weights" 2>/dev/null
  "$run" "$work/dlrm_cuda.plan.txt" --inputs "$work/inputs.npz" --device cuda --verbose \
    --output-dir "$out" 2>"$work/stderr"
  rc=$?
  cat "$work/stderr"
  if [ $rc -ne 0 ] && grep -qE "Unavailable: no usable CUDA device|no CUDA device|built without the CUDA backend" "$work/stderr"; then
    [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && fail "outputs left behind"
    echo "SKIP: no GPU ($(tail -1 "$work/stderr"))"; exit 77
  fi
  [ $rc -eq 0 ] || fail "ember-run --device cuda failed"
  grep -q "runs on" "$work/stderr" || fail "--verbose did not name the device"
  check_prob ;;
device_mismatch)
  # A CPU plan on the CUDA backend; a build without it says so instead.
  if "$run" --list-kernels | grep -q " cuda "; then
    expect_failure 1 "compiled for the cpu target" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" --device cuda
  else
    expect_failure 1 "built without the CUDA backend" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" --device cuda
  fi ;;
bad_device)
  expect_failure 2 "--device needs cpu, cuda or cuda:N" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" --device gpu0 ;;
bad_device_index)
  expect_failure 2 "--device needs cpu, cuda or cuda:N" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" --device cuda:1x ;;
cuda_graphs_needs_device)
  expect_failure 2 "--cuda-graphs needs --device cuda" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" --cuda-graphs ;;
missing_plan)
  expect_failure 1 "does not exist" -- "$work/absent.plan" --inputs "$work/inputs.npz" ;;
corrupt_plan)
  head -c 100 "$work/dlrm.plan" >"$work/cut.plan"
  expect_failure 1 "DataLoss" -- "$work/cut.plan" --inputs "$work/inputs.npz" ;;
missing_input_file)
  expect_failure 1 "absent.npy' does not exist" -- "$work/dlrm.plan" --inputs "$work/inputs.npz" \
    --input extra="$work/absent.npy" ;;
bad_npy)
  printf 'not numpy at all' >"$work/bad.npy"
  expect_failure 1 "bad magic" -- "$work/dlrm.plan" --input dense="$work/bad.npy" \
    --input sparse.values="$work/sparse_values.npy" --input sparse.lengths="$work/sparse_lengths.npy" ;;
truncated_npy)
  head -c 150 "$work/dense.npy" >"$work/short.npy"
  expect_failure 1 "truncated" -- "$work/dlrm.plan" --input dense="$work/short.npy" \
    --input sparse.values="$work/sparse_values.npy" --input sparse.lengths="$work/sparse_lengths.npy" ;;
wrong_input_name)
  expect_failure 1 "unknown input 'dnse'" -- "$work/dlrm.plan" --input dnse="$work/dense.npy" \
    --input sparse.values="$work/sparse_values.npy" --input sparse.lengths="$work/sparse_lengths.npy" ;;
missing_kjt_part)
  expect_failure 1 "needs exactly one of 'sparse.lengths' and 'sparse.offsets'" -- "$work/dlrm.plan" \
    --input dense="$work/dense.npy" --input sparse.values="$work/sparse_values.npy" ;;
usage)
  expect_failure 2 "unknown option '--frobnicate'" -- "$work/dlrm.plan" --frobnicate ;;
bad_repeat)
  expect_failure 2 "--repeat needs an integer >= 1" -- "$work/dlrm.plan" --repeat 0 ;;
list_kernels)
  "$run" --list-kernels >"$work/stdout" || fail "exit status $?"
  grep -q "grouped_embedding_bag" "$work/stdout" || fail "kernel list lacks grouped_embedding_bag"
  # Each kernel's attributes from the kernel contract, under it.
  grep -A1 "^softmax " "$work/stdout" | grep -qx "    axis: int = -1" || fail "softmax's attribute axis is not listed"
  grep -A1 "^cast " "$work/stdout" | grep -qx "    to: string" || fail "cast's required attribute to is not listed" ;;
*)
  fail "unknown case" ;;
esac
echo "PASS ($case_name)"
