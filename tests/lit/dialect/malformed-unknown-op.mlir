// RUN: not ember-opt %s 2>&1 | FileCheck %s

func.func @f(%a: !ember.jagged<f32>) {
  // CHECK: malformed-unknown-op.mlir:[[@LINE+1]]:8: error: custom op 'ember.jagged.frobnicate' is unknown
  %0 = ember.jagged.frobnicate %a : !ember.jagged<f32>
  return
}
