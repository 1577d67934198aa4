// Slices on a run-time dim as the ONNX importer writes them (`x[1:]` of the
// batch: offset min(B, 1), size max(B - min(B, 1), 0)) lower to the slice
// kernel with its own clamped starts/ends (ONNX semantics); the zeros added
// to a value of that run-time size are an identity, not an expand.

// RUN: rm -rf %t && mkdir -p %t
// RUN: ember-compile %s -o %t/m.plan.txt
// RUN: FileCheck %s < %t/m.plan.txt

// CHECK: kernel: "slice"
// CHECK: name: "starts"
// CHECK-NEXT: ints {
// CHECK-NEXT: values: 1
// CHECK: name: "ends"
// CHECK-NEXT: ints {
// CHECK-NEXT: values: 9223372036854775807
// CHECK: kernel: "mul"
// CHECK-NOT: kernel: "expand"
// CHECK: kernel: "identity"
// CHECK: kernel: "slice"
// CHECK: name: "starts"
// CHECK-NEXT: ints {
// CHECK-NEXT: values: 0
// CHECK: name: "ends"
// CHECK-NEXT: ints {
// CHECK-NEXT: values: 1
// CHECK: kernel: "concat"
module {
  func.func @main(%arg0: tensor<?x6xf32> {onnx.dim_params = ["B", ""], onnx.name = "x"}) -> (tensor<?x6xf32> {onnx.name = "y"}) {
    %cst = arith.constant dense<2.000000e+00> : tensor<1x1xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x6xf32>
    %1 = arith.minsi %dim, %c1 : index
    %2 = arith.subi %dim, %1 : index
    %3 = arith.maxsi %2, %c0 : index
    %s = tensor.extract_slice %arg0[%1, 0] [%3, 6] [1, 1] : tensor<?x6xf32> to tensor<?x6xf32>
    %4 = tosa.mul %s, %cst, %0 : (tensor<?x6xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<?x6xf32>
    %splat = tensor.splat %cst_0[%3] : tensor<?x6xf32>
    %5 = tosa.add %4, %splat : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %6 = arith.minsi %dim, %c0 : index
    %7 = arith.subi %1, %6 : index
    %8 = arith.maxsi %7, %c0 : index
    %s1 = tensor.extract_slice %arg0[%6, 0] [%8, 6] [1, 1] : tensor<?x6xf32> to tensor<?x6xf32>
    %9 = tosa.concat %s1, %5 {axis = 0 : i32} : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    return %9 : tensor<?x6xf32>
  }
}
