#!/usr/bin/env bash
# Configures, builds and runs the consumer project against an EmberRuntime
# package. Usage: run_test.sh SOURCE_DIR PACKAGE_DIR WORK_DIR MAKE_PLAN
set -eu
src=$1 package=$2 work=$3 make_plan=$4
rm -rf "$work" && mkdir -p "$work"
"$make_plan" "$work/plan" 4
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DEmberRuntime_DIR="$package" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/consumer" "$work/plan/dlrm.plan" | tee "$work/out.txt"
grep -q "input sparse (KJT)" "$work/out.txt"
