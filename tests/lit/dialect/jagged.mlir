// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// CHECK-LABEL: func.func @values
// CHECK: ember.jagged.values %{{.*}} : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
func.func @values(%j: !ember.jagged<f32, [4]>) -> tensor<?x4xf32> {
  %v = ember.jagged.values %j : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
  return %v : tensor<?x4xf32>
}
