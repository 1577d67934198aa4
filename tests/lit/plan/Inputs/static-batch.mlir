// Used by memory-plan.mlir: a model with a static batch.
func.func @main(%a: tensor<2x8xf32> {onnx.name = "a"}) -> (tensor<2x8xf32> {onnx.name = "y"}) {
  %t = tosa.tanh %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %t : tensor<2x8xf32>
}
