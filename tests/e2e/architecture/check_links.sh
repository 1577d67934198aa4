#!/usr/bin/env bash
# The architecture's link rules, checked on the built binaries (readelf's
# NEEDED entries, so nothing is loaded):
#   - the runtime (ember-run) never links MLIR or LLVM;
#   - the compiler (ember-compile, ember-opt) never links CUDA, cuBLAS or NCCL;
#   - nothing links the CUDA driver library (libcuda): binaries must start on
#     machines without a GPU.
# Usage: check_links.sh EMBER_RUN [COMPILER_BINARY...]
set -u
run=$1; shift
fail=0
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
check() { # BINARY PATTERN WHAT
  local bad
  bad=$(needed "$1" | grep -E "$2" || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $(basename "$1") links $3: $bad"; fail=1
  else
    echo "ok: $(basename "$1") does not link $3"
  fi
}
command -v readelf >/dev/null || { echo "SKIP: no readelf"; exit 77; }
check "$run" '^lib(MLIR|LLVM)' "MLIR/LLVM"
check "$run" '^libcuda[.]so' "the CUDA driver library"
for bin in "$@"; do
  check "$bin" '^lib(cudart|cublas|cublasLt|nccl|cuda)[.]so' "CUDA"
done
exit $fail
