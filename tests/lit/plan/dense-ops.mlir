// The tosa/tensor/arith ops of compiler/plan/PlanDenseOps.cpp in the plan's
// text form: broadcasting binaries, unary math, reciprocal as 1 / x, reduce
// with keepdims, tosa.slice (a size of -1 is the rest of the dim: the whole
// run-time dim from 0, else up to the end the kernel clamps), integer to
// float casts, x != 0 as a cast to bool, select as where.

// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - | FileCheck %s

// CHECK:      rank 0: {{[0-9]+}} slots
// CHECK-NEXT:   input %[[X:[0-9]+]] "x": f32[batch, 4]
// CHECK-NEXT:   input %[[Y:[0-9]+]] "y": f32[batch, 4]
// CHECK-NEXT:   input %[[K:[0-9]+]] "k": i64[2, 4]
// CHECK-NEXT:   const %[[ONE:[0-9]+]] "recip.one": f32[1, 1] (4 bytes)
// CHECK-NEXT:   %[[M:[0-9]+]]: f32[batch, 4] = mul(%[[X]], %[[Y]])  // mul
// CHECK-NEXT:   %[[MX:[0-9]+]]: f32[batch, 4] = max(%[[M]], %[[Y]])  // max
// CHECK-NEXT:   %[[E:[0-9]+]]: f32[batch, 4] = exp(%[[MX]])  // exp
// CHECK-NEXT:   %[[R:[0-9]+]]: f32[batch, 4] = div(%[[ONE]], %[[E]])  // recip
// CHECK-NEXT:   %[[S:[0-9]+]]: f32[batch, 1] = reduce_sum(%[[R]]) {axes = [1], keepdims = 1}  // sum
// CHECK-NEXT:   %[[P:[0-9]+]]: f32[batch, 2] = slice(%[[E]]) {starts = [1], ends = [3], axes = [1], steps = [1]}  // slice
// CHECK-NEXT:   %[[T:[0-9]+]]: f32[[[TAIL:d[0-9]+]], 4] = slice(%[[X]]) {starts = [1], ends = [9223372036854775807], axes = [0], steps = [1]}  // tail
// CHECK-NEXT:   %[[KF:[0-9]+]]: f32[2, 4] = cast(%[[K]]) {to = "float32"}  // to_float
// CHECK-NEXT:   %[[NZ:[0-9]+]]: bool[2, 4] = cast(%[[KF]]) {to = "bool"}  // nonzero
// CHECK-NEXT:   %[[NEG:[0-9]+]]: f32[2, 4] = neg(%[[KF]])  // neg
// CHECK-NEXT:   %[[W:[0-9]+]]: f32[2, 4] = where(%[[NZ]], %[[KF]], %[[NEG]])  // where
// CHECK-NEXT:   output "sum" = %[[S]]
// CHECK-NEXT:   output "part" = %[[P]]
// CHECK-NEXT:   output "tail" = %[[T]]
// CHECK-NEXT:   output "nonzero" = %[[NZ]]
// CHECK-NEXT:   output "picked" = %[[W]]
module {
  func.func @main(%x: tensor<?x4xf32> {onnx.name = "x", onnx.dim_params = ["batch", ""]},
                  %y: tensor<?x4xf32> {onnx.name = "y", onnx.dim_params = ["batch", ""]},
                  %k: tensor<2x4xi64> {onnx.name = "k"})
      -> (tensor<?x1xf32> {onnx.name = "sum"}, tensor<?x2xf32> {onnx.name = "part"}, tensor<?x4xf32> {onnx.name = "tail"}, tensor<2x4xi1> {onnx.name = "nonzero"}, tensor<2x4xf32> {onnx.name = "picked"}) {
    %zf = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %m = tosa.mul %x, %y, %shift : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<1xi8>) -> tensor<?x4xf32> loc("mul")
    %mx = tosa.maximum %m, %y : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> loc("max")
    %e = tosa.exp %mx : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("exp")
    %r = tosa.reciprocal %e : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("recip")
    %s = tosa.reduce_sum %r {axis = 1 : i32} : (tensor<?x4xf32>) -> tensor<?x1xf32> loc("sum")
    %start = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %size = tosa.const_shape {values = dense<[-1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %p = tosa.slice %e, %start, %size : (tensor<?x4xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<?x2xf32> loc("slice")
    %start1 = tosa.const_shape {values = dense<[1, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %size1 = tosa.const_shape {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %tail = tosa.slice %x, %start1, %size1 : (tensor<?x4xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<?x4xf32> loc("tail")
    %kf = arith.sitofp %k : tensor<2x4xi64> to tensor<2x4xf32> loc("to_float")
    %zero = arith.constant dense<0.0> : tensor<2x4xf32>
    %nz = arith.cmpf une, %kf, %zero : tensor<2x4xf32> loc("nonzero")
    %neg = tosa.negate %kf, %zf, %zf : (tensor<2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4xf32> loc("neg")
    %pick = tosa.select %nz, %kf, %neg : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("where")
    return %s, %p, %tail, %nz, %pick : tensor<?x1xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<2x4xi1>, tensor<2x4xf32>
  }
}
