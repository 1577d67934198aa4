#!/usr/bin/env bash
# Installs every system dependency Ember needs to build and test, from Debian's
# packages. Idempotent: packages already present are not downloaded again.
# Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # build tools
  cmake ninja-build ccache lld g++ git python3
  # fuzzing and sanitizer builds (presets fuzz, tsan): clang 22 and its
  # compiler-rt (libFuzzer, ASan, UBSan, TSan runtimes)
  clang-22 libclang-rt-22-dev
  # compiler: MLIR/LLVM 22, lit, FileCheck
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # plan format, ONNX import, collectives, CPU GEMM
  protobuf-compiler libprotobuf-dev zlib1g-dev libonnx-dev libgloo-dev libopenblas-dev
  # tests and benchmarks (iproute2: ip, tc, ss for the network-namespace
  # fault tests, ctest label netns)
  libgtest-dev libgmock-dev libbenchmark-dev iproute2
  # Python side: tests of the tracer, PyTorch references and peer benchmarks
  python3-torch python3-onnx python3-numpy python3-pytest
  # progress bars of ember.export on a terminal (without it: lines per step)
  python3-tqdm
  # the runtime's Python module (ember.Session): headers and pybind11
  python3-dev pybind11-dev
  # renders the HTML sharding report in its test (e2e.sharding_report.html_render;
  # about 96 MB to download, 290 MB installed, 11 s here; runs as root with
  # --no-sandbox)
  chromium-headless-shell
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
else
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x /usr/lib/llvm-22/bin/mlir-tblgen ]; then
  echo "setup: MLIR 22 is not installed (libmlir-22-dev, mlir-22-tools)" >&2
  exit 1
fi
