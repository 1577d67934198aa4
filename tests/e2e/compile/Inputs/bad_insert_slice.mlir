// A write into part of a run-time dim over a run-time size: outside the
// plan emitter's subset (partial writes need static sizes).
func.func @main(%x: tensor<?x4xf32> {onnx.name = "x"}, %y: tensor<?x4xf32> {onnx.name = "y"}) -> (tensor<?x4xf32> {onnx.name = "z"}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x4xf32>
  %r = tensor.insert_slice %y into %x[1, 0] [%n, 4] [1, 1] : tensor<?x4xf32> into tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
