// A tensor.reshape to two dims that are quotients of run-time dims (not
// products of dims, so neither can be followed): outside the plan emitter's
// subset (one unknown dim is inferred by the reshape kernel, two are not).
func.func @main(%a: tensor<?x?xf32> {onnx.name = "a"}) -> (tensor<?x?xf32> {onnx.name = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %q0 = arith.divui %d0, %c3 : index
  %q1 = arith.divui %d1, %c3 : index
  %n0 = arith.index_cast %q0 : index to i64
  %n1 = arith.index_cast %q1 : index to i64
  %shape = tensor.from_elements %n0, %n1 : tensor<2xi64>
  %r = tensor.reshape %a(%shape) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
