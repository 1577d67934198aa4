// Reshapes in the plan's text form (compiler/plan/PlanShapeAlgebra.cpp):
// each result dim is an expression over the input's dims, and the reshape
// kernel's shape copies a dim equal to the input's at the same position (0),
// infers at most one (-1) and states the rest. tensor.reshape's shape from
// tensor.from_elements of index arithmetic (B, 12) evaluates at compile
// time; a collapse of [B, 3] is one dim of its own symbol (3 * B).

// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - | FileCheck %s

// CHECK:      input "x": f32[B, 3, 4]
// CHECK-NEXT: output "rows": f32[[[R:d[0-9]+]], 4]
// CHECK-NEXT: output "flat": f32[B, 12]
// CHECK-NEXT: output "regrouped": f32[B, 2, 6]
// CHECK-NEXT: rank 0: 4 slots
// CHECK-NEXT:   input %[[X:[0-9]+]] "x": f32[B, 3, 4]
// CHECK-NEXT:   %[[ROWS:[0-9]+]]: f32[[[R]], 4] = reshape(%[[X]]) {shape = [-1, 4]}  // rows
// CHECK-NEXT:   %[[FLAT:[0-9]+]]: f32[B, 12] = reshape(%[[X]]) {shape = [0, 12]}  // flat
// CHECK-NEXT:   %[[RG:[0-9]+]]: f32[B, 2, 6] = reshape(%[[FLAT]]) {shape = [0, 2, 6]}  // regrouped
// CHECK-NEXT:   output "rows" = %[[ROWS]]
// CHECK-NEXT:   output "flat" = %[[FLAT]]
// CHECK-NEXT:   output "regrouped" = %[[RG]]

// A reshape whose dims are not products of the input's is an error at it.
// RUN: rm -f %t.bad.txt
// RUN: sed -e 's/%c12 = arith.constant 12 : i64/%c12 = arith.constant 7 : i64/' -e 's/tensor<?x12xf32>/tensor<?x7xf32>/g' -e 's/tensor<?x2x6xf32>/tensor<?x7x1xf32>/g' -e 's/output_shape \[%b, 2, 6\]/output_shape [%b, 7, 1]/' %s > %t.bad.mlir
// RUN: not ember-compile %t.bad.mlir --emit plan-text -o %t.bad.txt 2>&1 | FileCheck %s --check-prefix=CHECK-BAD
// RUN: not test -e %t.bad.txt
// CHECK-BAD: error: 'tensor.reshape': reshape of 12*B elements to 'tensor<?x7xf32>' (7*B elements)
module {
  func.func @main(%x: tensor<?x3x4xf32> {onnx.name = "x", onnx.dim_params = ["B", "", ""]})
      -> (tensor<?x4xf32> {onnx.name = "rows"}, tensor<?x12xf32> {onnx.name = "flat"}, tensor<?x2x6xf32> {onnx.name = "regrouped"}) {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %b = tensor.dim %x, %c0 : tensor<?x3x4xf32>
    %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x3x4xf32> into tensor<?x4xf32> loc("rows")
    %n = arith.muli %b, %c3 : index
    %bi = arith.index_cast %b : index to i64
    %c12 = arith.constant 12 : i64
    %shape = tensor.from_elements %bi, %c12 : tensor<2xi64>
    %flat = tensor.reshape %x(%shape) : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32> loc("flat")
    %r = tensor.expand_shape %flat [[0], [1, 2]] output_shape [%b, 2, 6] : tensor<?x12xf32> into tensor<?x2x6xf32> loc("regrouped")
    return %rows, %flat, %r : tensor<?x4xf32>, tensor<?x12xf32>, tensor<?x2x6xf32>
  }
}
