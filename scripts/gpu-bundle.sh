#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs into one directory small enough to
# travel to a GPU host (the device tool carries at most 64 MiB): stripped
# copies of the GPU test binaries, ember-run, ember-make-test-plan and
# ember_tbe_bench, and in lib/ the shared libraries they need that a GPU
# host may lack (Gloo and its dependencies, OpenBLAS, gfortran). The CUDA
# runtime, cuBLASLt and NCCL are not packed (hundreds of MB): the GPU host's
# CUDA installation or its PyTorch wheels (nvidia-* packages) provide them,
# and gpu-check.sh finds them there.
#
#   bash scripts/gpu-bundle.sh [BUILD_DIR] [BUNDLE_DIR]   # default build/release gpu-bundle
#   writes BUNDLE_DIR and BUNDLE_DIR.tar.xz (about 10 MB); on the GPU host:
#   tar -xJf gpu-bundle.tar.xz && bash scripts/gpu-check.sh gpu-bundle OUT_DIR
# With the device tool: put the .tar.xz in a git-ignored folder of the repo
# (gpu-bundle/ is ignored), carry it, and run the two commands there.
set -euo pipefail
build=${1:-build/release}
bundle=${2:-gpu-bundle}
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
bins=("$build"/bin/ember-run "$build"/bin/ember-make-test-plan)
[ -x "$build/bin/ember_tbe_bench" ] && bins+=("$build/bin/ember_tbe_bench")
for t in "$build"/bin/gpu_*_test; do
  case $t in *_emulation_test) ;; *) bins+=("$t") ;; esac
done
for b in "${bins[@]}"; do
  strip -o "$bundle/bin/$(basename "$b")" "$b"
done
# Shared libraries outside the base system and outside CUDA.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libnccl)'
for b in "${bins[@]}"; do
  ldd "$b" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $skip ]]; then
    cp -L "$path" "$bundle/lib/$name"
  fi
done
strip --strip-unneeded "$bundle"/lib/* 2>/dev/null || true
# The DLRM example (and its DCN variant) exported and compiled for CUDA here,
# where ember-compile and the exporter's PyTorch are: gpu-check.sh runs them
# against torch eager on the GPU (bench/gpu/dlrm_cuda_vs_pytorch.sh run).
if [ -x "$build/bin/ember-compile" ] && /usr/bin/python3 -c "import torch" 2>/dev/null; then
  here=$(cd "$(dirname "$0")/.." && pwd)
  for arch in dlrm dcn; do
    ARCH=$arch bash "$here/bench/gpu/dlrm_cuda_vs_pytorch.sh" prepare "$build" \
      "$bundle/$arch-work" "${DLRM_BATCH:-2048}" >/dev/null
  done
fi
# Compressed, it is about a tenth of its size (OpenBLAS alone is 36 MB).
tar -cJf "$bundle.tar.xz" -C "$(dirname "$bundle")" "$(basename "$bundle")"
du -sh "$bundle" "$bundle.tar.xz"
echo "on the GPU host: tar -xJf $(basename "$bundle").tar.xz && bash scripts/gpu-check.sh $(basename "$bundle") OUT_DIR"
