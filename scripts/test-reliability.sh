#!/usr/bin/env bash
# The reliability stages of README's test command (scripts/test-all.sh;
# docs/reliability.md), cheap enough for 2 cores:
#
#   fuzz  builds the runtime-side fuzz targets and fuzz_sharding_json in
#         build/fuzz (`cmake --preset fuzz`: clang-22, ASan + UBSan, only
#         these targets), replays every checked-in corpus (`ctest --preset
#         fuzz`: each seed and regression input once), then fuzzes each target
#         for EMBER_FUZZ_SECONDS (default 10) seconds.
#   tsan  builds runtime_concurrency_test, runtime_progress_test,
#         runtime_stream_overlap_test, runtime_pipeline_test and
#         runtime_communicator_channel_test and
#         runtime_communicator_steps_test in
#         build/tsan (`cmake --preset tsan`: clang-22, ThreadSanitizer,
#         runtime only) and runs them (`ctest --preset tsan`): 8 threads on
#         one session, then on one C API session, for EMBER_STRESS_SECONDS
#         (default 2) each; progress advanced from two threads.
#
# The compiler-side targets (fuzz_mlir_parse, fuzz_onnx_import) need the
# dialect and the ONNX importer built with the sanitizers (about 6 minutes
# more on 2 cores), so they run in the longer campaigns only:
# `scripts/fuzz.sh compiler SECONDS`.
#
# usage: scripts/test-reliability.sh [fuzz] [tsan]   (both by default)
set -euo pipefail
cd "$(dirname "$0")/.."

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(fuzz tsan)
start=$(date +%s)
note() { echo "reliability: $* ($(( $(date +%s) - start )) s)"; }

CI_FUZZ_TARGETS=(fuzz_npy fuzz_npz fuzz_plan_loader fuzz_session_run fuzz_sharding_json)
seconds=${EMBER_FUZZ_SECONDS:-10}

for stage in "${stages[@]}"; do
  case "$stage" in
    fuzz)
      note "fuzz: building ${CI_FUZZ_TARGETS[*]}"
      cmake --preset fuzz >/dev/null
      cmake --build --preset fuzz --target "${CI_FUZZ_TARGETS[@]}"
      note "fuzz: replaying the corpora"
      pattern=$(IFS='|'; echo "${CI_FUZZ_TARGETS[*]}")
      ctest --preset fuzz -R "^(${pattern})_corpus\$" -j2
      for target in "${CI_FUZZ_TARGETS[@]}"; do
        EMBER_FUZZ_NO_BUILD=1 bash scripts/fuzz.sh "$target" "$seconds"
      done
      note "fuzz: done"
      ;;
    tsan)
      note "tsan: building runtime_concurrency_test runtime_progress_test runtime_stream_overlap_test runtime_pipeline_test runtime_communicator_channel_test runtime_communicator_steps_test"
      cmake --preset tsan >/dev/null
      cmake --build --preset tsan --target runtime_concurrency_test runtime_progress_test runtime_stream_overlap_test runtime_pipeline_test runtime_communicator_channel_test runtime_communicator_steps_test
      ctest --preset tsan
      note "tsan: done"
      ;;
    *)
      echo "test-reliability.sh: unknown stage '$stage' (fuzz, tsan)" >&2
      exit 2
      ;;
  esac
done
