#!/usr/bin/env bash
# Runs a libFuzzer campaign (docs/reliability.md):
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags ...]
#
# TARGET is one fuzz target (fuzz_npy, fuzz_npz, fuzz_plan_loader,
# fuzz_session_run, fuzz_sharding_json, fuzz_mlir_parse, fuzz_onnx_import),
# or `runtime` (the four runtime-side ones), `compiler` (the three
# compiler-side ones) or `all`; a group runs its targets one after the other,
# SECONDS each. The targets are built first in build/fuzz (`cmake --preset
# fuzz`, clang-22 with ASan + UBSan; only the targets asked for).
#
# Each campaign starts from the checked-in corpus fuzz/corpus/TARGET and
# writes what it adds to build/fuzz/campaign/TARGET/corpus (never into the
# repository; `-merge=1` it into fuzz/corpus by hand when it is worth
# keeping). A crash, leak, timeout or out-of-memory input goes to
# build/fuzz/campaign/TARGET/ with libFuzzer's report; the script then exits
# non-zero. Every run appends "date target seconds executions result" to
# build/fuzz/campaign/log.tsv.
#
# Environment: EMBER_FUZZ_BUILD (default build/fuzz), EMBER_FUZZ_NICE (niceness,
# default 10), EMBER_FUZZ_NO_BUILD=1 to use the binaries as they are.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNTIME_TARGETS=(fuzz_npy fuzz_npz fuzz_plan_loader fuzz_session_run)
COMPILER_TARGETS=(fuzz_sharding_json fuzz_mlir_parse fuzz_onnx_import)

if [ $# -lt 2 ]; then
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
what=$1
seconds=$2
shift 2
case "$what" in
  runtime) targets=("${RUNTIME_TARGETS[@]}") ;;
  compiler) targets=("${COMPILER_TARGETS[@]}") ;;
  all) targets=("${RUNTIME_TARGETS[@]}" "${COMPILER_TARGETS[@]}") ;;
  fuzz_*) targets=("$what") ;;
  *) echo "fuzz.sh: unknown target '$what'" >&2; exit 2 ;;
esac
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "fuzz.sh: SECONDS must be a positive integer" >&2
  exit 2
fi

build=${EMBER_FUZZ_BUILD:-build/fuzz}
nice_level=${EMBER_FUZZ_NICE:-10}
if [ "${EMBER_FUZZ_NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$build/build.ninja" ]; then
    nice -n "$nice_level" cmake --preset fuzz -B "$build" >/dev/null
  fi
  nice -n "$nice_level" ninja -C "$build" "${targets[@]}"
fi

campaign="$build/campaign"
mkdir -p "$campaign"
status=0
for target in "${targets[@]}"; do
  work="$campaign/$target"
  mkdir -p "$work/corpus"
  log="$work/last.log"
  echo "fuzz.sh: $target for $seconds s (log: $log)"
  set +e
  ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
    nice -n "$nice_level" "$build/bin/$target" \
      -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -timeout=25 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$work/" "$@" "$work/corpus" "fuzz/corpus/$target" \
      >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    result=ok
  else
    result="FAILED(rc=$rc)"
    status=1
    grep -E "^(==[0-9]+==ERROR|SUMMARY|FUZZ INVARIANT|.*runtime error:|artifact_prefix)" "$log" | head -8 >&2 || true
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" \
    "$seconds" "${execs:-0}" "$result" >>"$campaign/log.tsv"
  echo "fuzz.sh: $target: ${execs:-0} executions (${rate:-0}/s): $result"
done
exit $status
