// A tosa.gather with a batch (N) of 2: outside the plan emitter's subset.
func.func @main(%v: tensor<2x16x4xf32> {onnx.name = "v"}) -> (tensor<2x3x4xf32> {onnx.name = "y"}) {
  %i = "tosa.const"() <{values = dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
  %r = tosa.gather %v, %i : (tensor<2x16x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}
