module {
  func.func @main(%p: tensor<?x3x2xf32> {onnx.dim_params = ["B", "", ""], onnx.name = "padded"},
                  %o: tensor<?xi64> {onnx.name = "offsets"}) -> (tensor<?x2xf32> {onnx.name = "values"}, tensor<?x4x2xf32> {onnx.name = "repadded"}) {
    %j = ember.jagged.from_padded %p, %o : tensor<?x3x2xf32>, tensor<?xi64> -> !ember.jagged<f32, [2]>
    %v = ember.jagged.values %j : !ember.jagged<f32, [2]> -> tensor<?x2xf32>
    %r = ember.jagged.to_padded %j max_length = 4 padding = -1.0 : f32 : !ember.jagged<f32, [2]> -> tensor<?x4x2xf32>
    return %v, %r : tensor<?x2xf32>, tensor<?x4x2xf32>
  }
}
