// The compiler's memory plan on a chain whose buffers die at known points.
// Every result is float32 [B, 256]: 4096 bytes at --max-batch 4.
//   %t1 = tanh(a)       alive in instructions 0..3 (read by the add)
//   %t2 = sigmoid(t1)   1..2
//   %t3 = tanh(t2)      2..3
//   %t4 = t3 + t1       3..end (the output)
// t1 is read again by the add, so sigmoid cannot overwrite it: t2 at 4096.
// tanh and add are elementwise and their inputs t2 and t3 die there, so t3
// and t4 are computed in place over t2's bytes: 8192 bytes in all.

// RUN: rm -rf %t && mkdir -p %t
// RUN: ember-compile %s -o %t/m.plan.txt --max-batch 4 --memory-stats 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: FileCheck %s < %t/m.plan.txt
// STATS: memory plan: 4 slots in a static arena of 8192 bytes (16384 without reuse), 0 slots left to the dynamic arena

// CHECK: programs {
// CHECK: slots {
// CHECK-NEXT: name: "a"
// CHECK-NOT: arena_offset
// CHECK: slots {
// CHECK-NEXT: name: "t1"
// CHECK: arena_offset: 0
// CHECK: slots {
// CHECK-NEXT: name: "t2"
// CHECK: arena_offset: 4096
// CHECK: slots {
// CHECK-NEXT: name: "t3"
// CHECK: arena_offset: 4096
// CHECK: slots {
// CHECK-NEXT: name: "t4"
// CHECK: arena_offset: 4096
// CHECK: arena_bytes: 8192
// CHECK: target: TARGET_CPU
// CHECK: symbol_bounds {
// CHECK-NEXT: symbol: "[[B:.*]]"
// CHECK-NEXT: max: 4

// Without --max-batch the batch-sized buffers are left to the runtime.
// RUN: ember-compile %s -o %t/d.plan.txt --memory-stats 2>&1 | FileCheck %s --check-prefix=NOBOUND
// RUN: FileCheck %s --check-prefix=NOBOUND-PLAN < %t/d.plan.txt
// NOBOUND: memory plan: 0 slots in a static arena of 0 bytes (0 without reuse), 4 slots left to the dynamic arena
// NOBOUND-PLAN-NOT: arena_offset
// NOBOUND-PLAN-NOT: symbol_bounds

// --target cuda is recorded; --no-memory-plan places nothing.
// RUN: ember-compile %s -o %t/c.plan.txt --target cuda --max-batch 4 --no-memory-plan
// RUN: FileCheck %s --check-prefix=CUDA < %t/c.plan.txt
// CUDA-NOT: arena_offset
// CUDA: target: TARGET_CUDA

// A static batch cannot be bounded.
// RUN: not ember-compile %S/Inputs/static-batch.mlir -o %t/s.plan --max-batch 4 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not test -e %t/s.plan
// STATIC: error: --max-batch 4 given, but the model has no symbolic batch dimension

func.func @main(%a: tensor<?x256xf32> {onnx.name = "a"}) -> (tensor<?x256xf32> {onnx.name = "y"}) {
  %t1 = tosa.tanh %a : (tensor<?x256xf32>) -> tensor<?x256xf32> loc("t1")
  %t2 = tosa.sigmoid %t1 : (tensor<?x256xf32>) -> tensor<?x256xf32> loc("t2")
  %t3 = tosa.tanh %t2 : (tensor<?x256xf32>) -> tensor<?x256xf32> loc("t3")
  %t4 = tosa.add %t3, %t1 : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32> loc("t4")
  return %t4 : tensor<?x256xf32>
}
