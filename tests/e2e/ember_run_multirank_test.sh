#!/usr/bin/env bash
# End-to-end tests of multi-rank ember-run on the hand-built sharded plans of
# ember-make-sharded-plan. Usage:
#   ember_run_multirank_test.sh CASE EMBER_RUN MAKE_SHARDED MAKE_TEST_PLAN WORKDIR
# Exit 0 pass, 1 fail, 77 skipped.
set -u
case_name=$1 run=$2 make_sharded=$3 make_plan=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
"$make_sharded" "$work" 11 || { echo "FAIL: cannot write the test plans"; exit 1; }
fail() { echo "FAIL ($case_name): $*"; exit 1; }
pass() { echo "PASS ($case_name)"; exit 0; }

# reference MODEL: the single-rank outputs of MODEL (tw or rw) in $work/ref_MODEL
reference() {
  "$run" "$work/$1.plan" --inputs "$work/$1_inputs.npz" --output-dir "$work/ref_$1" \
    >/dev/null || fail "single-rank run of $1 failed"
}
# same_bits DIR MODEL: every output equal to the single-rank one, byte for byte
same_bits() {
  for f in pooled dense_relu; do
    cmp "$1/$f.npy" "$work/ref_$2/$f.npy" || fail "$f differs from one rank ($1)"
  done
}
# close DIR MODEL: equal within 1e-5 + 1e-4 |x| (row-wise sums in another order)
close() {
  for f in pooled dense_relu; do
    "$make_plan" --compare "$1/$f.npy" "$work/ref_$2/$f.npy" >/dev/null \
      || fail "$f differs from one rank ($1)"
  done
}
# expect_failure SECONDS CODE FRAGMENT -- ARGS: exits CODE within SECONDS with
# FRAGMENT on stderr and no output file.
expect_failure() {
  local limit=$1 code=$2 fragment=$3; shift 4
  local out=$work/out_fail start=$SECONDS
  "$run" "$@" --output-dir "$out" >"$work/stdout" 2>"$work/stderr"
  local rc=$? took=$((SECONDS - start))
  cat "$work/stderr"
  [ $rc -eq "$code" ] || fail "exit status $rc, expected $code"
  [ $took -le "$limit" ] || fail "took ${took}s, more than ${limit}s"
  grep -qF -- "$fragment" "$work/stderr" || fail "stderr lacks '$fragment'"
  if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then fail "outputs left behind: $(ls -A "$out")"; fi
  pass
}

case $case_name in
nproc_table_wise)
  reference tw
  for n in 1 2 4; do
    "$run" "$work/tw$n.plan" --nproc $n --inputs "$work/tw_inputs.npz" \
      --output-dir "$work/out$n" --repeat 3 >"$work/stdout$n" || fail "--nproc $n failed"
    cat "$work/stdout$n"
    grep -q "output pooled: float32\[11, 24\]" "$work/stdout$n" || fail "no gathered output line ($n)"
    same_bits "$work/out$n" tw
    [ -z "$(ls -A "$work/out$n" | grep -v '\.npy$')" ] || fail "stray files in out$n"
  done ;;
nproc_row_wise)
  reference rw
  for n in 2 4; do
    "$run" "$work/rw$n.plan" --nproc $n --inputs "$work/rw_inputs.npz" \
      --output-dir "$work/out$n" >/dev/null || fail "--nproc $n failed"
    close "$work/out$n" rw
  done ;;
nproc_one_rank)
  # A batch smaller than the ranks: rank 3 of 4 gets no samples.
  "$make_sharded" "$work/small" 3 || fail "cannot write the small batch"
  "$run" "$work/small/tw.plan" --inputs "$work/small/tw_inputs.npz" --output-dir "$work/ref_small" \
    >/dev/null || fail "single-rank run failed"
  "$run" "$work/small/tw4.plan" --nproc 4 --inputs "$work/small/tw_inputs.npz" \
    --output-dir "$work/out4" >/dev/null || fail "--nproc 4 failed"
  for f in pooled dense_relu; do
    cmp "$work/out4/$f.npy" "$work/ref_small/$f.npy" || fail "$f differs"
  done ;;
outside_launcher_file|outside_launcher_tcp)
  # Two ranks started by hand, each with its own inputs ('{rank}').
  reference tw
  if [ $case_name = outside_launcher_file ]; then
    export EMBER_RENDEZVOUS="file:$work/store"
  else
    export MASTER_ADDR=127.0.0.1 MASTER_PORT=$((20000 + $$ % 20000))
  fi
  export WORLD_SIZE=2
  RANK=1 LOCAL_RANK=1 "$run" "$work/tw2.plan" --inputs "$work/tw_inputs.rank{rank}.npz" \
    --timeout 20 --output-dir "$work/out_r1" >"$work/stdout1" 2>&1 &
  pid1=$!
  RANK=0 LOCAL_RANK=0 "$run" "$work/tw2.plan" --inputs "$work/tw_inputs.rank{rank}.npz" \
    --timeout 20 --output-dir "$work/out" >"$work/stdout0" 2>&1 || { cat "$work/stdout0"; fail "rank 0 failed"; }
  wait $pid1 || { cat "$work/stdout1"; fail "rank 1 failed"; }
  cat "$work/stdout0"
  [ ! -e "$work/out_r1" ] || fail "rank 1 wrote outputs"
  [ ! -s "$work/stdout1" ] || fail "rank 1 printed: $(cat "$work/stdout1")"
  same_bits "$work/out" tw ;;
outside_launcher_split)
  # Both ranks read the global batch and take their part (--split-batch).
  reference rw
  export EMBER_RENDEZVOUS="file:$work/store" WORLD_SIZE=4
  pids=()
  for r in 1 2 3; do
    RANK=$r "$run" "$work/rw4.plan" --inputs "$work/rw_inputs.npz" --split-batch \
      --timeout 20 >/dev/null 2>&1 &
    pids+=($!)
  done
  RANK=0 "$run" "$work/rw4.plan" --inputs "$work/rw_inputs.npz" --split-batch \
    --timeout 20 --output-dir "$work/out" >/dev/null || fail "rank 0 failed"
  for p in "${pids[@]}"; do wait $p || fail "a rank failed"; done
  close "$work/out" rw ;;
wrong_nproc)
  expect_failure 30 1 "the plan is for 4 rank(s) but this session's world has 2 ranks" -- \
    "$work/tw4.plan" --nproc 2 --inputs "$work/tw_inputs.npz" --timeout 5 ;;
rank_exits)
  # Rank 2 of 4 dies before its first run: the others lose it at once.
  EMBER_RUN_TEST_FAULT=2:exit expect_failure 20 1 "rank 2 exited with status 3" -- \
    "$work/tw4.plan" --nproc 4 --inputs "$work/tw_inputs.npz" --timeout 15 ;;
rank_exits_mid_run)
  # Rank 1 of 4 dies before its 6th run, the others already in it.
  EMBER_RUN_TEST_FAULT=1:exit@5 expect_failure 20 1 "rank 1 exited with status 3" -- \
    "$work/rw4.plan" --nproc 4 --inputs "$work/rw_inputs.npz" --warmup 2 --repeat 50 --timeout 15 ;;
rank_hangs_mid_run)
  EMBER_RUN_TEST_FAULT=2:hang@3 expect_failure 12 1 "not heard from rank 2" -- \
    "$work/tw4.plan" --nproc 4 --inputs "$work/tw_inputs.npz" --repeat 20 --timeout 3 ;;
rank_hangs)
  # Rank 1 of 2 hangs: rank 0 times out after 3 s naming it, the launcher
  # stops the hung rank; well within the 60 s default.
  EMBER_RUN_TEST_FAULT=1:hang expect_failure 12 1 "not heard from rank 1" -- \
    "$work/tw2.plan" --nproc 2 --inputs "$work/tw_inputs.npz" --timeout 3 ;;
single_rank_refuses)
  expect_failure 10 1 "the plan is for 2 rank(s) but this is a single-rank session" -- \
    "$work/tw2.plan" --inputs "$work/tw_inputs.npz" ;;
*)
  fail "unknown case" ;;
esac
pass
