// RUN: ember-opt --ember-raise-dense-ops %s -split-input-file | FileCheck %s
// RUN: ember-opt --ember-raise-dense-ops %s -split-input-file | ember-opt --ember-raise-dense-ops -split-input-file | FileCheck %s

// Each pattern as `ember-translate --import-onnx` writes it (from torch's
// exports; weights replaced by splats), and near misses that must stay as
// they are. The second run checks that the raised IR is stable.

//===----------------------------------------------------------------------===//
// ember.linear
//===----------------------------------------------------------------------===//

// Gemm + bias + ReLU: the weight [1, K, N] becomes [K, N], the bias [N].
// CHECK-LABEL: func.func @linear_bias_relu(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x5xf32>
// CHECK: %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x5x4xf32> into tensor<5x4xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: %[[Y:.*]] = ember.linear %[[X]], %[[W]], %[[B]] {activation = "relu", transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
// CHECK-NOT: tosa.matmul
// CHECK-NOT: tosa.clamp
// CHECK-NOT: tensor.dim
// CHECK: return %[[Y]]
func.func @linear_bias_relu(%x: tensor<?x5xf32>) -> tensor<?x4xf32> {
  %w = arith.constant dense<0.5> : tensor<4x5xf32>
  %b = arith.constant dense<0.25> : tensor<1x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c0 = arith.constant 0 : index
  %wt = tosa.transpose %w {perms = array<i32: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  %dim = tensor.dim %x, %c0 : tensor<?x5xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, %dim, 5] : tensor<?x5xf32> into tensor<1x?x5xf32>
  %w3 = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 5, 4] : tensor<5x4xf32> into tensor<1x5x4xf32>
  %m = tosa.matmul %x3, %w3, %zp, %zp : (tensor<1x?x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x4xf32>
  %y = tensor.collapse_shape %m [[0, 1], [2]] : tensor<1x?x4xf32> into tensor<?x4xf32>
  %yb = tosa.add %y, %b : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  %r = tosa.clamp %yb {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// Two layers, the second reading the first; no bias, then sigmoid; tanh.
// CHECK-LABEL: func.func @linear_chain(
// CHECK: %[[H:.*]] = ember.linear %{{.*}}, %{{.*}} {activation = "sigmoid", transpose_weight = false} : tensor<2x5xf32>, tensor<5x4xf32> -> tensor<2x4xf32>
// CHECK: %[[Y:.*]] = ember.linear %[[H]], %{{.*}} {activation = "tanh", transpose_weight = false} : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: return %[[Y]]
func.func @linear_chain(%x: tensor<2x5xf32>) -> tensor<2x3xf32> {
  %w1 = arith.constant dense<0.5> : tensor<1x5x4xf32>
  %w2 = arith.constant dense<0.5> : tensor<1x4x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %m1 = tosa.matmul %x3, %w1, %zp, %zp : (tensor<1x2x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %y1 = tensor.collapse_shape %m1 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %h = tosa.sigmoid %y1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %h3 = tensor.expand_shape %h [[0, 1], [2]] output_shape [1, 2, 4] : tensor<2x4xf32> into tensor<1x2x4xf32>
  %m2 = tosa.matmul %h3, %w2, %zp, %zp : (tensor<1x2x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  %y2 = tensor.collapse_shape %m2 [[0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
  %r = tosa.tanh %y2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Near misses of the bias and the activation: a clamp that is not a ReLU
// stays after the linear; a bias that is not a constant stays as an add.
// CHECK-LABEL: func.func @linear_partial(
// CHECK: %[[Y:.*]] = ember.linear %{{.*}}, %{{.*}}, %{{.*}} {transpose_weight = false} : tensor<2x5xf32>, tensor<5x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
// CHECK: tosa.clamp %[[Y]] {max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32}
// CHECK: %[[Z:.*]] = ember.linear %{{.*}}, %{{.*}} {transpose_weight = false} : tensor<2x5xf32>, tensor<5x4xf32> -> tensor<2x4xf32>
// CHECK: tosa.add %[[Z]], %{{.*}} : (tensor<2x4xf32>, tensor<1x4xf32>)
func.func @linear_partial(%x: tensor<2x5xf32>, %bias: tensor<1x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<1x5x4xf32>
  %b = arith.constant dense<0.25> : tensor<1x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x2x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %y = tensor.collapse_shape %m [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %yb = tosa.add %y, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %r6 = tosa.clamp %yb {max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m2 = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x2x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %y2 = tensor.collapse_shape %m2 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %z = tosa.add %y2, %bias : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %r6, %z : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Near misses: a matmul something else reads too, a weight that is not a
// constant.
// CHECK-LABEL: func.func @linear_not(
// CHECK-NOT: ember.linear
// CHECK: return
func.func @linear_not(%x: tensor<2x5xf32>, %wa: tensor<1x5x4xf32>) -> (tensor<2x4xf32>, tensor<1x2x4xf32>, tensor<2x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<1x5x4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x2x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %y = tensor.collapse_shape %m [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %m2 = tosa.matmul %x3, %wa, %zp, %zp : (tensor<1x2x5xf32>, tensor<1x5x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %y2 = tensor.collapse_shape %m2 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  return %y, %m, %y2 : tensor<2x4xf32>, tensor<1x2x4xf32>, tensor<2x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ember.softmax
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x16xf32>
// CHECK: %[[S:.*]] = ember.softmax %[[X]] axis = 1 : tensor<?x16xf32>
// CHECK-NOT: tosa.exp
// CHECK-NOT: tosa.reduce
// CHECK: return %[[S]]
func.func @softmax(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %max = tosa.reduce_max %x {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %sh = tosa.sub %x, %max : (tensor<?x16xf32>, tensor<?x1xf32>) -> tensor<?x16xf32>
  %e = tosa.exp %sh : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %sm = tosa.mul %e, %inv, %shift : (tensor<?x16xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  return %sm : tensor<?x16xf32>
}

// -----

// A piece that something else reads stays (here x - max).
// CHECK-LABEL: func.func @softmax_shared(
// CHECK: %[[MAX:.*]] = tosa.reduce_max
// CHECK: %[[SH:.*]] = tosa.sub %{{.*}}, %[[MAX]]
// CHECK: %[[S:.*]] = ember.softmax %{{.*}} axis = 1 : tensor<?x16xf32>
// CHECK-NOT: tosa.exp
// CHECK: return %[[S]], %[[SH]]
func.func @softmax_shared(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %max = tosa.reduce_max %x {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %sh = tosa.sub %x, %max : (tensor<?x16xf32>, tensor<?x1xf32>) -> tensor<?x16xf32>
  %e = tosa.exp %sh : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %sm = tosa.mul %e, %inv, %shift : (tensor<?x16xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  return %sm, %sh : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// Near miss: the max and the sum over different axes.
// CHECK-LABEL: func.func @softmax_axes_differ(
// CHECK-NOT: ember.softmax
// CHECK: tosa.exp
func.func @softmax_axes_differ(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %max = tosa.reduce_max %x {axis = 0 : i32} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %sh = tosa.sub %x, %max : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %e = tosa.exp %sh : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %sm = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %sm : tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ember.layer_norm
//===----------------------------------------------------------------------===//

// LayerNormalization with scale and shift: both become [16].
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x16xf32>
// CHECK: %[[G:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x16xf32> into tensor<16xf32>
// CHECK: %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x16xf32> into tensor<16xf32>
// CHECK: %[[Y:.*]] = ember.layer_norm %[[X]] scale(%[[G]] : tensor<16xf32>) bias(%[[B]] : tensor<16xf32>) axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
// CHECK-NOT: tosa.rsqrt
// CHECK-NOT: tosa.reduce_sum
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %n = arith.constant dense<6.250000e-02> : tensor<1x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<1x1xf32>
  %g = arith.constant dense<1.5> : tensor<1x16xf32>
  %b = arith.constant dense<0.5> : tensor<1x16xf32>
  %s1 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %mean = tosa.mul %s1, %n, %shift : (tensor<?x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x1xf32>
  %d = tosa.sub %x, %mean : (tensor<?x16xf32>, tensor<?x1xf32>) -> tensor<?x16xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  %s2 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %var = tosa.mul %s2, %n, %shift : (tensor<?x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x1xf32>
  %ve = tosa.add %var, %eps : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  %rs = tosa.rsqrt %ve : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %norm = tosa.mul %d, %rs, %shift : (tensor<?x16xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  %scaled = tosa.mul %norm, %g, %shift : (tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  %out = tosa.add %scaled, %b : (tensor<?x16xf32>, tensor<1x16xf32>) -> tensor<?x16xf32>
  return %out : tensor<?x16xf32>
}

// -----

// Over the last two dims of [2, 3, 4] (1/N = 1/12), no scale or shift.
// CHECK-LABEL: func.func @layer_norm_two_axes(
// CHECK: %[[Y:.*]] = ember.layer_norm %{{.*}} axis = 1 epsilon = 9.99999974E-6 : tensor<2x3x4xf32>
// CHECK-NOT: tosa.
// CHECK: return %[[Y]]
func.func @layer_norm_two_axes(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %n = arith.constant dense<0.0833333358> : tensor<1x1x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<1x1x1xf32>
  %a1 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %s1 = tosa.reduce_sum %a1 {axis = 2 : i32} : (tensor<2x1x4xf32>) -> tensor<2x1x1xf32>
  %mean = tosa.mul %s1, %n, %shift : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1xf32>
  %d = tosa.sub %x, %mean : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<1xi8>) -> tensor<2x3x4xf32>
  %a2 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %s2 = tosa.reduce_sum %a2 {axis = 2 : i32} : (tensor<2x1x4xf32>) -> tensor<2x1x1xf32>
  %var = tosa.mul %s2, %n, %shift : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x1x1xf32>
  %ve = tosa.add %var, %eps : (tensor<2x1x1xf32>, tensor<1x1x1xf32>) -> tensor<2x1x1xf32>
  %rs = tosa.rsqrt %ve : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %norm = tosa.mul %d, %rs, %shift : (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<1xi8>) -> tensor<2x3x4xf32>
  return %norm : tensor<2x3x4xf32>
}

// -----

// A scale broadcast from one value is not the kernel's: the normalization
// is raised, the mul stays.
// CHECK-LABEL: func.func @layer_norm_scalar_scale(
// CHECK: %[[N:.*]] = ember.layer_norm %{{.*}} axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
// CHECK: %[[Y:.*]] = tosa.mul %[[N]], %{{.*}}, %{{.*}} : (tensor<?x16xf32>, tensor<1x1xf32>, tensor<1xi8>)
// CHECK: return %[[Y]]
func.func @layer_norm_scalar_scale(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %n = arith.constant dense<6.250000e-02> : tensor<1x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<1x1xf32>
  %g = arith.constant dense<1.5> : tensor<1x1xf32>
  %s1 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %mean = tosa.mul %s1, %n, %shift : (tensor<?x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x1xf32>
  %d = tosa.sub %x, %mean : (tensor<?x16xf32>, tensor<?x1xf32>) -> tensor<?x16xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  %s2 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<?x16xf32>) -> tensor<?x1xf32>
  %var = tosa.mul %s2, %n, %shift : (tensor<?x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x1xf32>
  %ve = tosa.add %var, %eps : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  %rs = tosa.rsqrt %ve : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %norm = tosa.mul %d, %rs, %shift : (tensor<?x16xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  %scaled = tosa.mul %norm, %g, %shift : (tensor<?x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x16xf32>
  return %scaled : tensor<?x16xf32>
}

// -----

// Near misses: 1/N is not the inverse of the normalized count (1/8 for
// 16 elements); the mean over a leading axis.
// CHECK-LABEL: func.func @layer_norm_not(
// CHECK-NOT: ember.layer_norm
// CHECK: tosa.rsqrt
// CHECK: tosa.rsqrt
func.func @layer_norm_not(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %n = arith.constant dense<1.250000e-01> : tensor<1x1xf32>
  %n4 = arith.constant dense<2.500000e-01> : tensor<1x1xf32>
  %eps = arith.constant dense<9.99999974E-6> : tensor<1x1xf32>
  %s1 = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %mean = tosa.mul %s1, %n, %shift : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %s2 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %var = tosa.mul %s2, %n, %shift : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x1xf32>
  %ve = tosa.add %var, %eps : (tensor<4x1xf32>, tensor<1x1xf32>) -> tensor<4x1xf32>
  %rs = tosa.rsqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %norm = tosa.mul %d, %rs, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %t1 = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %tmean = tosa.mul %t1, %n4, %shift : (tensor<1x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x16xf32>
  %td = tosa.sub %x, %tmean : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %tsq = tosa.mul %td, %td, %shift : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %t2 = tosa.reduce_sum %tsq {axis = 0 : i32} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %tvar = tosa.mul %t2, %n4, %shift : (tensor<1x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x16xf32>
  %tve = tosa.add %tvar, %eps : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %trs = tosa.rsqrt %tve : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %tnorm = tosa.mul %td, %trs, %shift : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %norm, %tnorm : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ember.dcn_cross
//===----------------------------------------------------------------------===//

// Two full-rank layers x0 * (W x + b) + x and a low-rank one
// x0 * (U (V x) + b) + x (torch's DCN export): the weights become
// [out, in]; the layers absorb their linear chains.
// CHECK-LABEL: func.func @cross(
// CHECK-SAME: %[[X0:[^:]*]]: tensor<?x8xf32>
// CHECK: %[[K1:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x8x8xf32> into tensor<8x8xf32>
// CHECK: %[[W1:.*]] = tosa.transpose %[[K1]] {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[B1:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK: %[[L1:.*]] = ember.dcn_cross %[[X0]], %[[X0]] weights(%[[W1]] : tensor<8x8xf32>) bias(%[[B1]] : tensor<8xf32>) : tensor<?x8xf32>
// CHECK: %[[L2:.*]] = ember.dcn_cross %[[X0]], %[[L1]] weights(%{{.*}} : tensor<8x8xf32>) bias(%{{.*}} : tensor<8xf32>) : tensor<?x8xf32>
// CHECK: %[[KV:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x8x3xf32> into tensor<8x3xf32>
// CHECK: %[[V:.*]] = tosa.transpose %[[KV]] {perms = array<i32: 1, 0>} : (tensor<8x3xf32>) -> tensor<3x8xf32>
// CHECK: %[[KU:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<1x3x8xf32> into tensor<3x8xf32>
// CHECK: %[[U:.*]] = tosa.transpose %[[KU]] {perms = array<i32: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32>
// CHECK: %[[L3:.*]] = ember.dcn_cross %[[X0]], %[[L2]] weights(%[[V]], %[[U]] : tensor<3x8xf32>, tensor<8x3xf32>) bias(%{{.*}} : tensor<8xf32>) : tensor<?x8xf32>
// CHECK-NOT: tosa.matmul
// CHECK-NOT: tosa.mul
// CHECK: return %[[L3]]
func.func @cross(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c0 = arith.constant 0 : index
  %w = arith.constant dense<0.125> : tensor<8x8xf32>
  %b = arith.constant dense<0.5> : tensor<1x8xf32>
  %v = arith.constant dense<0.25> : tensor<1x8x3xf32>
  %u = arith.constant dense<0.75> : tensor<8x3xf32>
  %wt = tosa.transpose %w {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w3 = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 8, 8] : tensor<8x8xf32> into tensor<1x8x8xf32>
  %dim = tensor.dim %x0, %c0 : tensor<?x8xf32>
  %e1 = tensor.expand_shape %x0 [[0, 1], [2]] output_shape [1, %dim, 8] : tensor<?x8xf32> into tensor<1x?x8xf32>
  %m1 = tosa.matmul %e1, %w3, %zp, %zp : (tensor<1x?x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x8xf32>
  %c1 = tensor.collapse_shape %m1 [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  %l1 = tosa.add %c1, %b : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %p1 = tosa.mul %x0, %l1, %shift : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<1xi8>) -> tensor<?x8xf32>
  %x1 = tosa.add %p1, %x0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %dim1 = tensor.dim %x1, %c0 : tensor<?x8xf32>
  %e2 = tensor.expand_shape %x1 [[0, 1], [2]] output_shape [1, %dim1, 8] : tensor<?x8xf32> into tensor<1x?x8xf32>
  %m2 = tosa.matmul %e2, %w3, %zp, %zp : (tensor<1x?x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x8xf32>
  %c2 = tensor.collapse_shape %m2 [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  %l2 = tosa.add %c2, %b : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %p2 = tosa.mul %x0, %l2, %shift : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<1xi8>) -> tensor<?x8xf32>
  %x2 = tosa.add %p2, %x1 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %dim2 = tensor.dim %x2, %c0 : tensor<?x8xf32>
  %e3 = tensor.expand_shape %x2 [[0, 1], [2]] output_shape [1, %dim2, 8] : tensor<?x8xf32> into tensor<1x?x8xf32>
  %mv = tosa.matmul %e3, %v, %zp, %zp : (tensor<1x?x8xf32>, tensor<1x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x3xf32>
  %ut = tosa.transpose %u {perms = array<i32: 1, 0>} : (tensor<8x3xf32>) -> tensor<3x8xf32>
  %ut3 = tensor.expand_shape %ut [[0, 1], [2]] output_shape [1, 3, 8] : tensor<3x8xf32> into tensor<1x3x8xf32>
  %mu = tosa.matmul %mv, %ut3, %zp, %zp : (tensor<1x?x3xf32>, tensor<1x3x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x8xf32>
  %c3 = tensor.collapse_shape %mu [[0, 1], [2]] : tensor<1x?x8xf32> into tensor<?x8xf32>
  %l3 = tosa.add %c3, %b : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
  %p3 = tosa.mul %x0, %l3, %shift : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<1xi8>) -> tensor<?x8xf32>
  %x3 = tosa.add %p3, %x2 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %x3 : tensor<?x8xf32>
}

// -----

// Near miss: an activation between the linear layer and the product is no
// cross layer: the linear is raised, the mul and add stay.
// CHECK-LABEL: func.func @cross_relu(
// CHECK-NOT: ember.dcn_cross
// CHECK: %[[L:.*]] = ember.linear %{{.*}}, %{{.*}}, %{{.*}} {activation = "relu", transpose_weight = false}
// CHECK: %[[P:.*]] = tosa.mul %{{.*}}, %[[L]]
// CHECK: tosa.add %[[P]], %{{.*}}
func.func @cross_relu(%x0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %w3 = arith.constant dense<0.125> : tensor<1x8x8xf32>
  %b = arith.constant dense<0.5> : tensor<1x8xf32>
  %e1 = tensor.expand_shape %x0 [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
  %m1 = tosa.matmul %e1, %w3, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %c1 = tensor.collapse_shape %m1 [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %l1 = tosa.add %c1, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %r1 = tosa.clamp %l1 {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %p1 = tosa.mul %x0, %r1, %shift : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %x1 = tosa.add %p1, %x0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x1 : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// ember.dot_interaction
//===----------------------------------------------------------------------===//

// torch's export of the DLRM interaction at a run-time batch (the dense
// vector [B, 4] and three pooled embeddings in one [B, 12] input):
// T = cat(x, emb).view(B, -1, 4); Z = bmm(T, T^T); Z[:, li, lj] with the
// lower triangle; cat(x, that). The view's shape, Z's dims and the gather's
// flat indices li * n + lj are computed from tensor.dim at run time.
// CHECK-LABEL: func.func @interaction_dlrm(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32>, %[[E:[^:]*]]: tensor<?x12xf32>
// CHECK-NOT: tosa.
// CHECK-NOT: tensor.reshape
// CHECK: %[[R:.*]] = ember.dot_interaction %[[X]], %[[E]] {num_features = 3 : i64} : tensor<?x4xf32>, tensor<?x12xf32> -> tensor<?x10xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.dim %[[R]], %{{.*}}
// CHECK-NEXT: return %[[R]], %[[B]]
func.func @interaction_dlrm(%x: tensor<?x4xf32>, %emb: tensor<?x12xf32>) -> (tensor<?x10xf32>, index) {
  %c1_i64 = arith.constant 1 : i64
  %c4_i64 = arith.constant 4 : i64
  %0 = tosa.const_shape  {values = dense<[-1, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %c6 = arith.constant 6 : index
  %1 = tosa.const_shape  {values = dense<[6, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %2 = tosa.const_shape  {values = dense<[1, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %3 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %4 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c0 = arith.constant 0 : index
  %cst_2 = arith.constant dense<[1, 2, 2, 3, 3, 3]> : tensor<6xi64>
  %cst_3 = arith.constant dense<[0, 0, 1, 0, 1, 2]> : tensor<6xi64>
  %9 = tosa.concat %x, %emb {axis = 1 : i32} : (tensor<?x4xf32>, tensor<?x12xf32>) -> tensor<?x16xf32>
  %dim_6 = tensor.dim %x, %c0 : tensor<?x4xf32>
  %dim_7 = tensor.dim %9, %c0 : tensor<?x16xf32>
  %10 = arith.muli %dim_7, %c16 : index
  %11 = arith.muli %dim_6, %c4 : index
  %12 = arith.divui %10, %11 : index
  %13 = arith.index_cast %dim_6 : index to i64
  %14 = arith.index_cast %12 : index to i64
  %from_elements = tensor.from_elements %13, %14, %c4_i64 : tensor<3xi64>
  %reshape = tensor.reshape %9(%from_elements) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %15 = tosa.transpose %reshape {perms = array<i32: 0, 2, 1>} : (tensor<?x?x4xf32>) -> tensor<?x4x?xf32>
  %16 = tosa.matmul %reshape, %15, %4, %4 : (tensor<?x?x4xf32>, tensor<?x4x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x?x?xf32>
  %dim_8 = tensor.dim %16, %c2 : tensor<?x?x?xf32>
  %17 = arith.index_cast %dim_8 : index to i64
  %from_elements_9 = tensor.from_elements %17 : tensor<1xi64>
  %18 = tosa.transpose %16 {perms = array<i32: 1, 2, 0>} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %dim_10 = tensor.dim %16, %c1 : tensor<?x?x?xf32>
  %dim_11 = tensor.dim %16, %c2 : tensor<?x?x?xf32>
  %19 = arith.muli %dim_10, %dim_11 : index
  %dim_12 = tensor.dim %16, %c0 : tensor<?x?x?xf32>
  %20 = tosa.mul %cst_2, %from_elements_9, %3 : (tensor<6xi64>, tensor<1xi64>, tensor<1xi8>) -> tensor<6xi64>
  %21 = tosa.add %20, %cst_3 : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
  %22 = arith.index_cast %19 : index to i64
  %23 = arith.index_cast %dim_12 : index to i64
  %from_elements_13 = tensor.from_elements %c1_i64, %22, %23 : tensor<3xi64>
  %reshape_14 = tensor.reshape %18(%from_elements_13) : (tensor<?x?x?xf32>, tensor<3xi64>) -> tensor<1x?x?xf32>
  %24 = arith.trunci %21 : tensor<6xi64> to tensor<6xi32>
  %25 = tosa.reshape %24, %2 : (tensor<6xi32>, !tosa.shape<2>) -> tensor<1x6xi32>
  %26 = tosa.gather %reshape_14, %25 : (tensor<1x?x?xf32>, tensor<1x6xi32>) -> tensor<1x6x?xf32>
  %27 = tosa.reshape %26, %1 : (tensor<1x6x?xf32>, !tosa.shape<2>) -> tensor<6x?xf32>
  %dim_15 = tensor.dim %16, %c0 : tensor<?x?x?xf32>
  %dim_16 = tensor.dim %27, %c1 : tensor<6x?xf32>
  %28 = arith.muli %dim_16, %c6 : index
  %29 = arith.divui %28, %dim_15 : index
  %30 = arith.index_cast %29 : index to i64
  %31 = arith.index_cast %dim_15 : index to i64
  %from_elements_17 = tensor.from_elements %30, %31 : tensor<2xi64>
  %reshape_18 = tensor.reshape %27(%from_elements_17) : (tensor<6x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %32 = tosa.transpose %reshape_18 {perms = array<i32: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %33 = tosa.reshape %32, %0 : (tensor<?x?xf32>, !tosa.shape<2>) -> tensor<?x6xf32>
  %34 = tosa.concat %x, %33 {axis = 1 : i32} : (tensor<?x4xf32>, tensor<?x6xf32>) -> tensor<?x10xf32>
  %dim_19 = tensor.dim %34, %c0 : tensor<?x10xf32>
  return %34, %dim_19 : tensor<?x10xf32>, index
}

// -----

// Two pooled embeddings side by side, the upper triangle (TorchRec's
// triu_indices(3, 3, offset=1)): one concat of the bags, pair_order
// "torchrec".
// CHECK-LABEL: func.func @interaction_torchrec(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>, %[[E1:[^:]*]]: tensor<2x4xf32>, %[[E2:[^:]*]]: tensor<2x4xf32>
// CHECK: %[[S:.*]] = tosa.concat %[[E1]], %[[E2]] {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
// CHECK: %[[R:.*]] = ember.dot_interaction %[[X]], %[[S]] {num_features = 2 : i64, pair_order = "torchrec"} : tensor<2x4xf32>, tensor<2x8xf32> -> tensor<2x7xf32>
// CHECK-NOT: tosa.gather
// CHECK-NOT: tosa.matmul
// CHECK: return %[[R]]
func.func @interaction_torchrec(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x7xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[1, 2, 5], [1, 2, 5]]> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x3x1xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}

// -----

// The lower triangle with the diagonal: self interaction.
// CHECK-LABEL: func.func @interaction_self(
// CHECK: ember.dot_interaction %{{.*}}, %{{.*}} {num_features = 2 : i64, self_interaction = true} : tensor<2x4xf32>, tensor<2x8xf32> -> tensor<2x10xf32>
// CHECK-NOT: tosa.gather
func.func @interaction_self(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x10xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 6]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[0, 3, 4, 6, 7, 8], [0, 3, 4, 6, 7, 8]]> : tensor<2x6xi32>}> : () -> tensor<2x6xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x6xi32>) -> tensor<2x6x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x6x1xf32>, !tosa.shape<2>) -> tensor<2x6xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x6xf32>) -> tensor<2x10xf32>
  return %r : tensor<2x10xf32>
}

// -----

// Near miss: the lower triangle in another order (no kernel order).
// CHECK-LABEL: func.func @interaction_shuffled(
// CHECK-NOT: ember.dot_interaction
// CHECK: tosa.gather
// CHECK: return
func.func @interaction_shuffled(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x7xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[6, 3, 7], [6, 3, 7]]> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x3x1xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}

// -----

// Near miss: part of the triangle only.
// CHECK-LABEL: func.func @interaction_partial(
// CHECK-NOT: ember.dot_interaction
// CHECK: tosa.gather
// CHECK: return
func.func @interaction_partial(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x6xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[3, 6], [3, 6]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x2xi32>) -> tensor<2x2x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x2x1xf32>, !tosa.shape<2>) -> tensor<2x2xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

// Near miss: the samples pick their pairs in different orders.
// CHECK-LABEL: func.func @interaction_per_sample(
// CHECK-NOT: ember.dot_interaction
// CHECK: tosa.gather
// CHECK: return
func.func @interaction_per_sample(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x7xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[3, 6, 7], [3, 7, 6]]> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x3x1xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  return %r : tensor<2x7xf32>
}

// -----

// Near miss: Z is read by something else too.
// CHECK-LABEL: func.func @interaction_z_read_twice(
// CHECK-NOT: ember.dot_interaction
// CHECK: tosa.matmul
// CHECK: return
func.func @interaction_z_read_twice(%x: tensor<2x4xf32>, %e1: tensor<2x4xf32>, %e2: tensor<2x4xf32>) -> (tensor<2x7xf32>, tensor<2x3x3xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s3 = tosa.const_shape {values = dense<[2, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s9 = tosa.const_shape {values = dense<[2, 9, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sp = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %idx = "tosa.const"() <{values = dense<[[3, 6, 7], [3, 6, 7]]> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
  %cat = tosa.concat %x, %e1, %e2 {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %t = tosa.reshape %cat, %s3 : (tensor<2x12xf32>, !tosa.shape<3>) -> tensor<2x3x4xf32>
  %tt = tosa.transpose %t {perms = array<i32: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %z = tosa.matmul %t, %tt, %zp, %zp : (tensor<2x3x4xf32>, tensor<2x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %zf = tosa.reshape %z, %s9 : (tensor<2x3x3xf32>, !tosa.shape<3>) -> tensor<2x9x1xf32>
  %g = tosa.gather %zf, %idx : (tensor<2x9x1xf32>, tensor<2x3xi32>) -> tensor<2x3x1xf32>
  %pairs = tosa.reshape %g, %sp : (tensor<2x3x1xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
  %r = tosa.concat %x, %pairs {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
  return %r, %z : tensor<2x7xf32>, tensor<2x3x3xf32>
}

// -----

// A padded sequence summed over its length (to_padded_dense(L).sum(1)):
// ember.jagged.sum, without the padded tensor; with a non-zero padding, or a
// padded tensor read elsewhere too, it stays.
// CHECK-LABEL: func.func @jagged_sum
// CHECK: %[[S:.*]] = ember.jagged.sum %arg0 max_length = 3 : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
// CHECK: tosa.reshape %[[S]]
// CHECK-NOT: ember.jagged.to_padded
// CHECK-LABEL: func.func @jagged_sum_nonzero_padding
// CHECK: ember.jagged.to_padded
// CHECK: tosa.reduce_sum
// CHECK-NOT: ember.jagged.sum
func.func @jagged_sum(%j: !ember.jagged<f32, [4]>) -> tensor<?x1x4xf32> {
  %p = ember.jagged.to_padded %j max_length = 3 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x3x4xf32>
  %s = tosa.reduce_sum %p {axis = 1 : i32} : (tensor<?x3x4xf32>) -> tensor<?x1x4xf32>
  return %s : tensor<?x1x4xf32>
}
func.func @jagged_sum_nonzero_padding(%j: !ember.jagged<f32, [4]>) -> tensor<?x1x4xf32> {
  %p = ember.jagged.to_padded %j max_length = 3 padding = 1.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x3x4xf32>
  %s = tosa.reduce_sum %p {axis = 1 : i32} : (tensor<?x3x4xf32>) -> tensor<?x1x4xf32>
  return %s : tensor<?x1x4xf32>
}
