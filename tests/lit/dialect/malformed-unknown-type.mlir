// RUN: not ember-opt %s 2>&1 | FileCheck %s

// CHECK: malformed-unknown-type.mlir:[[@LINE+1]]:25: error: unknown type `ragged` in dialect `ember`
func.func @f(%a: !ember.ragged<f32>) {
  return
}
