// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// CHECK-LABEL: func.func @create_and_access
func.func @create_and_access(%v: tensor<?x4xf32>, %o: tensor<?xi64>)
    -> (tensor<?x4xf32>, tensor<?xi64>) {
  // CHECK: %[[J:.*]] = ember.jagged.create %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  %j = ember.jagged.create %v, %o : tensor<?x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  // CHECK: ember.jagged.values %[[J]] : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
  %values = ember.jagged.values %j : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
  // CHECK: ember.jagged.offsets %[[J]] : !ember.jagged<f32, [4]> -> tensor<?xi64>
  %offsets = ember.jagged.offsets %j : !ember.jagged<f32, [4]> -> tensor<?xi64>
  return %values, %offsets : tensor<?x4xf32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @ids
// CHECK: ember.jagged.create %{{.*}}, %{{.*}} : tensor<10xi64>, tensor<4xi64> -> !ember.jagged<i64>
func.func @ids(%v: tensor<10xi64>, %o: tensor<4xi64>) -> !ember.jagged<i64> {
  %j = ember.jagged.create %v, %o : tensor<10xi64>, tensor<4xi64> -> !ember.jagged<i64>
  return %j : !ember.jagged<i64>
}

// CHECK-LABEL: func.func @padding
func.func @padding(%j: !ember.jagged<f32, [4]>, %ids: !ember.jagged<i64>,
                   %o: tensor<?xi64>) {
  // CHECK: ember.jagged.to_padded %{{.*}} max_length = 8 padding = 0.000000e+00 : f32 : !ember.jagged<f32, [4]> -> tensor<?x8x4xf32>
  %p = ember.jagged.to_padded %j max_length = 8 padding = 0.0 : f32
      : !ember.jagged<f32, [4]> -> tensor<?x8x4xf32>
  // CHECK: ember.jagged.to_padded %{{.*}} max_length = 3 padding = -1 : i64 : !ember.jagged<i64> -> tensor<2x3xi64>
  %q = ember.jagged.to_padded %ids max_length = 3 padding = -1 : i64
      : !ember.jagged<i64> -> tensor<2x3xi64>
  // CHECK: ember.jagged.from_padded %{{.*}}, %{{.*}} : tensor<?x8x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  %r = ember.jagged.from_padded %p, %o : tensor<?x8x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  return
}
