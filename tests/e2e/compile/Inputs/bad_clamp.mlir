// A clamp that is not a ReLU: outside the plan emitter's subset.
func.func @main(%a: tensor<?x4xf32> {onnx.name = "a"}) -> (tensor<?x4xf32> {onnx.name = "y"}) {
  %r = tosa.clamp %a {max_val = 1.000000e+00 : f32, min_val = -1.000000e+00 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
