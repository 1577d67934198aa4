// A tosa.gather with run-time indices: outside the plan emitter's subset.
func.func @main(%v: tensor<1x16x?xf32> {onnx.name = "v"}, %i: tensor<1x6xi32> {onnx.name = "i"}) -> (tensor<1x6x?xf32> {onnx.name = "y"}) {
  %r = tosa.gather %v, %i : (tensor<1x16x?xf32>, tensor<1x6xi32>) -> tensor<1x6x?xf32>
  return %r : tensor<1x6x?xf32>
}
