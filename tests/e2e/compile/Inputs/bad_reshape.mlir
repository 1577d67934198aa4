// A tensor.reshape to a dim that is a product of two run-time dims: outside
// the plan emitter's subset (each dim must be a constant or one input dim).
func.func @main(%a: tensor<?x?xf32> {onnx.name = "a"}) -> (tensor<?xf32> {onnx.name = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %n = arith.muli %d0, %d1 : index
  %n64 = arith.index_cast %n : index to i64
  %shape = tensor.from_elements %n64 : tensor<1xi64>
  %r = tensor.reshape %a(%shape) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
