// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// x[:, 2:4] = y
// CHECK-LABEL: func.func @slice_assign
func.func @slice_assign(%x: !ember.mut<tensor<?x8xf32>>, %y: tensor<?x2xf32>, %b: index)
    -> tensor<?x8xf32> {
  // CHECK: %[[V:.*]] = ember.mut.slice %{{.*}}[0, 2] [%{{.*}}, 2] [1, 1] : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x2xf32>>
  %v = ember.mut.slice %x[0, 2] [%b, 2] [1, 1] : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x2xf32>>
  // CHECK: ember.mut.copy %{{.*}} into %[[V]] : tensor<?x2xf32> into !ember.mut<tensor<?x2xf32>>
  ember.mut.copy %y into %v : tensor<?x2xf32> into !ember.mut<tensor<?x2xf32>>
  // CHECK: ember.mut.to_tensor %{{.*}} : !ember.mut<tensor<?x8xf32>> -> tensor<?x8xf32>
  %r = ember.mut.to_tensor %x : !ember.mut<tensor<?x8xf32>> -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// x.add_(y)
// CHECK-LABEL: func.func @add_inplace
func.func @add_inplace(%x0: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: %[[X:.*]] = ember.mut.from_tensor %{{.*}} : tensor<4x8xf32> -> !ember.mut<tensor<4x8xf32>>
  %x = ember.mut.from_tensor %x0 : tensor<4x8xf32> -> !ember.mut<tensor<4x8xf32>>
  // CHECK: ember.mut.to_tensor %[[X]]
  %cur = ember.mut.to_tensor %x : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  // CHECK: tosa.add
  %sum = tosa.add %cur, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: ember.mut.copy %{{.*}} into %[[X]] : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
  ember.mut.copy %sum into %x : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
  %r = ember.mut.to_tensor %x : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// z = x.clone(); z[:, :][:, :] = y  (a copy into a chain of full-range slices)
// CHECK-LABEL: func.func @clone_full_slices
func.func @clone_full_slices(%x: !ember.mut<tensor<4x8xf32>>, %y: tensor<4x8xf32>)
    -> tensor<4x8xf32> {
  // CHECK: ember.mut.to_tensor
  // CHECK: ember.mut.from_tensor
  %cur = ember.mut.to_tensor %x : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  %z = ember.mut.from_tensor %cur : tensor<4x8xf32> -> !ember.mut<tensor<4x8xf32>>
  // CHECK: ember.mut.slice %{{.*}}[0, 0] [4, 8] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  %s1 = ember.mut.slice %z[0, 0] [4, 8] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  %s2 = ember.mut.slice %s1[0, 0] [4, 8] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  // CHECK: ember.mut.copy
  ember.mut.copy %y into %s2 : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
  %r = ember.mut.to_tensor %z : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Strided views with dynamic offsets.
// CHECK-LABEL: func.func @strided
// CHECK: ember.mut.slice %{{.*}}[%{{.*}}, 0] [2, 4] [1, 2] : !ember.mut<tensor<8x8xi64>> -> !ember.mut<tensor<2x4xi64>>
func.func @strided(%x: !ember.mut<tensor<8x8xi64>>, %i: index) {
  %v = ember.mut.slice %x[%i, 0] [2, 4] [1, 2] : !ember.mut<tensor<8x8xi64>> -> !ember.mut<tensor<2x4xi64>>
  return
}
