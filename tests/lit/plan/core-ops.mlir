// The ops the op walk lowers itself (compiler/plan/PlanEmitter.cpp), read in
// the plan's text form (ember-compile --emit plan-text): one instruction per
// op, constants recorded once, a transpose of a constant folded at compile
// time, shape-only ops emitting nothing, inputs and outputs in signature
// order. (A matmul by a constant would be raised to ember.linear; the
// weight is an argument here so that the plain matmul stays.)

// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - | FileCheck %s

// CHECK:      plan target cpu, world size 1
// CHECK-NEXT: input "ids": i64[n] bags of "offsets"
// CHECK-NEXT: input "offsets": i64[batch]
// CHECK-NEXT: input "dense": f32[batch, 4]
// CHECK-NEXT: input "w": f32[3, 4]
// CHECK-NEXT: output "y": f32[batch, 3]
// CHECK-NEXT: output "z": f32[batch, 5]
// CHECK-NEXT: rank 0: {{[0-9]+}} slots
// CHECK-NEXT:   input %[[IDS:[0-9]+]] "ids": i64[n]
// CHECK-NEXT:   input %[[OFF:[0-9]+]] "offsets": i64[batch]
// CHECK-NEXT:   input %[[X:[0-9]+]] "dense": f32[batch, 4]
// CHECK-NEXT:   input %[[W:[0-9]+]] "w": f32[3, 4]
// The table's rows and the folded reshape of the bias are the constants.
// CHECK-NEXT:   const %[[ROWS:[0-9]+]] "table": f32[6, 2] (48 bytes)
// CHECK-NEXT:   const %[[BIAS:[0-9]+]] "bias2": f32[1, 3] (12 bytes)
// CHECK-NEXT:   %[[BAG:[0-9]+]]: f32[batch, 2] = embedding_bag(%[[ROWS]], %[[IDS]], %[[OFF]], -) {pooling = "sum", include_last_offset = 0}  // bag
// CHECK-NEXT:   %[[WT:[0-9]+]]: f32[4, 3] = transpose(%[[W]]) {perm = [1, 0]}  // w_t
// CHECK-NEXT:   %[[XE:[0-9]+]]: f32[1, batch, 4] = reshape(%[[X]]) {shape = [1, -1, 4]}  // x3
// CHECK-NEXT:   %[[WE:[0-9]+]]: f32[1, 4, 3] = reshape(%[[WT]]) {shape = [1, 4, 3]}  // w3
// CHECK-NEXT:   %[[MM:[0-9]+]]: f32[1, batch, 3] = matmul(%[[XE]], %[[WE]])  // mm
// CHECK-NEXT:   %[[MC:[0-9]+]]: f32[batch, 3] = reshape(%[[MM]]) {shape = [-1, 3]}  // mm2
// CHECK-NEXT:   %[[A:[0-9]+]]: f32[batch, 3] = add(%[[MC]], %[[BIAS]])  // add
// CHECK-NEXT:   %[[R:[0-9]+]]: f32[batch, 3] = relu(%[[A]])  // relu
// CHECK-NEXT:   %[[S:[0-9]+]]: f32[batch, 3] = sigmoid(%[[R]])  // sig
// CHECK-NEXT:   %[[C:[0-9]+]]: f32[batch, 5] = concat(%[[BAG]], %[[S]]) {axis = 1}  // cat
// CHECK-NEXT:   %[[T:[0-9]+]]: f32[batch, 5] = tanh(%[[C]])  // tanh
// CHECK-NEXT:   %[[D:[0-9]+]]: f32[batch, 5] = sub(%[[T]], %[[C]])  // sub
// CHECK-NEXT:   output "y" = %[[S]]
// CHECK-NEXT:   output "z" = %[[D]]
// CHECK-NOT: {{.}}
module {
  ember.table @t : !ember.table<6x2, f32> init = dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]> : tensor<6x2xf32>
  func.func @main(%ids: tensor<?xi64> {onnx.name = "ids", onnx.dim_params = ["n"]},
                  %offsets: tensor<?xi64> {onnx.name = "offsets", onnx.dim_params = ["batch"]},
                  %x: tensor<?x4xf32> {onnx.name = "dense", onnx.dim_params = ["batch", ""]},
                  %w: tensor<3x4xf32> {onnx.name = "w"})
      -> (tensor<?x3xf32> {onnx.name = "y"}, tensor<?x5xf32> {onnx.name = "z"}) {
    %c0 = arith.constant 0 : index
    %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %table = ember.table.ref @t : !ember.table<6x2, f32> loc("table")
    %bag = ember.embedding_bag %table[%ids, %offsets] pooling = sum : !ember.table<6x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32> loc("bag")
    %bias = arith.constant dense<[0.5, -1.0, 2.0]> : tensor<3xf32> loc("bias")
    %bshape = tosa.const_shape {values = dense<[1, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %bias2 = tosa.reshape %bias, %bshape : (tensor<3xf32>, !tosa.shape<2>) -> tensor<1x3xf32> loc("bias2")
    %wt = tosa.transpose %w {perms = array<i32: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32> loc("w_t")
    %d = tensor.dim %x, %c0 : tensor<?x4xf32>
    %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, %d, 4] : tensor<?x4xf32> into tensor<1x?x4xf32> loc("x3")
    %w3 = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32> loc("w3")
    %mm = tosa.matmul %x3, %w3, %zp, %zp : (tensor<1x?x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x3xf32> loc("mm")
    %m = tensor.collapse_shape %mm [[0, 1], [2]] : tensor<1x?x3xf32> into tensor<?x3xf32> loc("mm2")
    %a = tosa.add %m, %bias2 : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32> loc("add")
    %r = tosa.clamp %a {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32> loc("relu")
    %y = tosa.sigmoid %r : (tensor<?x3xf32>) -> tensor<?x3xf32> loc("sig")
    %cat = tosa.concat %bag, %y {axis = 1 : i32} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32> loc("cat")
    %t = tosa.tanh %cat : (tensor<?x5xf32>) -> tensor<?x5xf32> loc("tanh")
    %s = tosa.sub %t, %cat : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32> loc("sub")
    return %y, %s : tensor<?x3xf32>, tensor<?x5xf32>
  }
}
