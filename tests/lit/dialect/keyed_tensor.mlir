// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

!kt = !ember.keyed_tensor<["user" : 16, "item" : 32], f32>

// CHECK-LABEL: func.func @keyed_tensor
func.func @keyed_tensor(%v: tensor<?x48xf32>, %other: !ember.keyed_tensor<["ctx" : 8], f32>) {
  // CHECK: %[[KT:.*]] = ember.keyed_tensor.create %{{.*}} : tensor<?x48xf32> -> !ember.keyed_tensor<["user" : 16, "item" : 32], f32>
  %kt = ember.keyed_tensor.create %v : tensor<?x48xf32> -> !kt
  // CHECK: ember.keyed_tensor.values %[[KT]] : !ember.keyed_tensor<["user" : 16, "item" : 32], f32> -> tensor<?x48xf32>
  %values = ember.keyed_tensor.values %kt : !kt -> tensor<?x48xf32>
  // CHECK: ember.keyed_tensor.get %[[KT]]["item"] : !ember.keyed_tensor<["user" : 16, "item" : 32], f32> -> tensor<?x32xf32>
  %item = ember.keyed_tensor.get %kt["item"] : !kt -> tensor<?x32xf32>
  // CHECK: ember.keyed_tensor.regroup %[[KT]], %{{.*}} : !ember.keyed_tensor<["user" : 16, "item" : 32], f32>, !ember.keyed_tensor<["ctx" : 8], f32>
  // CHECK-SAME: -> !ember.keyed_tensor<["ctx" : 8, "user" : 16], f32>
  %r = ember.keyed_tensor.regroup %kt, %other : !kt, !ember.keyed_tensor<["ctx" : 8], f32>
      -> !ember.keyed_tensor<["ctx" : 8, "user" : 16], f32>
  return
}

// CHECK-LABEL: func.func @static_batch
// CHECK: ember.keyed_tensor.create %{{.*}} : tensor<2x48xf32> -> !ember.keyed_tensor<["user" : 16, "item" : 32], f32>
func.func @static_batch(%v: tensor<2x48xf32>) -> !kt {
  %kt = ember.keyed_tensor.create %v : tensor<2x48xf32> -> !kt
  return %kt : !kt
}
