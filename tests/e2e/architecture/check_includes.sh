#!/usr/bin/env bash
# The architecture's include rules, checked on the sources:
#   - the CUDA backend (runtime/src/cuda) includes nothing from the CPU
#     kernels (runtime/src/kernels/cpu/): what both backends share (checks,
#     attribute readers, output shapes) is in runtime/src/kernels/shared/,
#     which includes nothing from kernels/cpu/ either;
#   - the runtime never includes an MLIR or LLVM header;
#   - the compiler's layers (docs/architecture.md, "Layout"): dialects/ and
#     sharding/, then passes/, then compiler/. Nothing under passes/ includes
#     a compiler/ header: neither one written "compiler/..." nor one found
#     through an include root inside compiler/ (as "sharding/Planner.h" was
#     while the planner lived in compiler/sharding/). The sharding planner
#     (sharding/) includes no MLIR and nothing from dialects/, passes/ or
#     compiler/; the dialect (dialects/) nothing from sharding/, passes/ or
#     compiler/;
#   - "ember/..." is the runtime's public API (runtime/include/ember/): every
#     such include names one of its headers; the dialect's headers are
#     included as "dialects/ember/...".
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

include='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
check "${include}compiler/" "include of compiler/ in passes/" "$src/passes"
check "${include}(compiler|passes|dialects)/" \
  "include of compiler/, passes/ or dialects/ in sharding/" "$src/sharding"
check "${include}(mlir)/" "MLIR header included by sharding/" "$src/sharding"
check "${include}(compiler|passes|sharding)/" \
  "include of compiler/, passes/ or sharding/ in dialects/" "$src/dialects"

# Quoted includes under passes/ that only an include root inside compiler/
# resolves (compiler/ itself or one of its directories), not the including
# file's directory or the repository root.
bad=""
while IFS=: read -r file line path; do
  [ -e "$(dirname "$file")/$path" ] && continue
  [ -e "$src/$path" ] && continue
  for root in "$src/compiler" "$src"/compiler/*/; do
    if [ -e "${root%/}/$path" ]; then
      bad+="$file:$line: \"$path\" is ${root%/}/$path"$'\n'
      break
    fi
  done
done < <(grep -rnoE "${include}[^\">]+" "$src/passes" 2>/dev/null |
         sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/:/')
if [ -n "$bad" ]; then
  echo "FAIL: header under compiler/ included by passes/:"; printf '%s' "$bad"
  fail=1
else
  echo "ok: no header under compiler/ included by passes/"
fi

# "ember/X" must be runtime/include/ember/X, wherever it is included.
bad=""
while IFS=: read -r file line path; do
  [ -e "$src/runtime/include/$path" ] ||
    bad+="$file:$line: \"$path\""$'\n'
done < <(grep -rnoE --include='*.h' --include='*.cpp' --include='*.cu' \
           --include='*.cuh' --include='*.c' --include='*.inc' \
           "${include}ember/[^\">]+" "$src"/{bench,compiler,dialects,examples,fuzz,passes,runtime,sharding,tests,tools} 2>/dev/null |
         sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]/:/')
if [ -n "$bad" ]; then
  echo "FAIL: \"ember/...\" include that is not a runtime public header" \
       "(the dialect is \"dialects/ember/...\"):"; printf '%s' "$bad"
  fail=1
else
  echo "ok: every \"ember/...\" include is a runtime public header"
fi
exit $fail
