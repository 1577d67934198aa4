// Ops the plan emitter maps one by one (no linear fusion: the matmul's
// right operand is a function argument, not a constant). run_test.py's case
// mlir_generic computes the same with numpy:
//   y = sigmoid(relu(a @ b^T - bias)),  z = 2 * tanh(concat(a, y))
func.func @main(%a: tensor<?x4xf32> {onnx.dim_params = ["batch", ""], onnx.name = "a"},
                %b: tensor<3x4xf32> {onnx.name = "b"})
    -> (tensor<?x3xf32> {onnx.name = "y"}, tensor<?x7xf32> {onnx.name = "z"}) {
  %c0 = arith.constant 0 : index
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %bias = arith.constant dense<[[0.5, -1.0, 2.0]]> : tensor<1x3xf32>
  %bt = tosa.transpose %b {perms = array<i32: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %d = tensor.dim %a, %c0 : tensor<?x4xf32>
  %ea = tensor.expand_shape %a [[0, 1], [2]] output_shape [1, %d, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
  %eb = tensor.expand_shape %bt [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %m = tosa.matmul %ea, %eb, %zp, %zp : (tensor<1x?x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x3xf32>
  %c = tensor.collapse_shape %m [[0, 1], [2]] : tensor<1x?x3xf32> into tensor<?x3xf32>
  %s = tosa.sub %c, %bias : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %r = tosa.clamp %s {max_val = 3.40282347E+38 : f32, min_val = 0.000000e+00 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %y = tosa.sigmoid %r : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %cat = tosa.concat %a, %y {axis = 1 : i32} : (tensor<?x4xf32>, tensor<?x3xf32>) -> tensor<?x7xf32>
  %t = tosa.tanh %cat : (tensor<?x7xf32>) -> tensor<?x7xf32>
  %z = tosa.add %t, %t : (tensor<?x7xf32>, tensor<?x7xf32>) -> tensor<?x7xf32>
  return %y, %z : tensor<?x3xf32>, tensor<?x7xf32>
}
