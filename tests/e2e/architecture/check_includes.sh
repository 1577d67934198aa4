#!/usr/bin/env bash
# The architecture's include rules, checked on the sources:
#   - the CUDA backend (runtime/src/cuda) includes nothing from the CPU
#     kernels (runtime/src/kernels/cpu/): what both backends share (checks,
#     attribute readers, output shapes) is in runtime/src/kernels/shared/,
#     which includes nothing from kernels/cpu/ either;
#   - the runtime never includes an MLIR or LLVM header.
# Usage: check_includes.sh SOURCE_DIR
set -u
src=$1
fail=0
check() { # PATTERN WHAT DIR...
  local pattern=$1 what=$2 bad
  shift 2
  bad=$(grep -rnE "$pattern" "$@" 2>/dev/null || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $what:"; echo "$bad"; fail=1
  else
    echo "ok: no $what"
  fi
}
check '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]kernels/cpu/' \
  "include of kernels/cpu/ in runtime/src/cuda or runtime/src/kernels/shared" \
  "$src/runtime/src/cuda" "$src/runtime/src/kernels/shared"
check '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](mlir|llvm)/' \
  "MLIR/LLVM header included by the runtime" "$src/runtime"
exit $fail
