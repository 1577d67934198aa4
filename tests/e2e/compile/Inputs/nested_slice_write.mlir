// Writes through views in ember's mutation form (what ember-functionalize
// removes): a write through a slice of a slice, an in-place add through one,
// a copy into a full-range slice of a clone (run-time batch), and a strided
// write through a slice of a slice (static). run_test.py nested_slice_write
// compiles it with ember-compile, runs the plan and compares with numpy.
// (torch 1.13's torch.onnx.export cannot export writes through nested
// slices, see make_dense_model.py.)
func.func @main(%x: tensor<?x8xf32> {onnx.name = "x"},
                %s: tensor<4x6xf32> {onnx.name = "s"})
    -> (tensor<?x8xf32> {onnx.name = "y"}, tensor<?x8xf32> {onnx.name = "c"},
        tensor<4x6xf32> {onnx.name = "t"}) {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  // y = 2 * x; y[:, 1:7][:, 2:5] = x[:, 0:3]
  %y0 = tosa.add %x, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %ym = ember.mut.from_tensor %y0 : tensor<?x8xf32> -> !ember.mut<tensor<?x8xf32>>
  %v1 = ember.mut.slice %ym[0, 1] [%b, 6] [1, 1] : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x6xf32>>
  %v2 = ember.mut.slice %v1[0, 2] [%b, 3] [1, 1] : !ember.mut<tensor<?x6xf32>> -> !ember.mut<tensor<?x3xf32>>
  %src = tensor.extract_slice %x[0, 0] [%b, 3] [1, 1] : tensor<?x8xf32> to tensor<?x3xf32>
  ember.mut.copy %src into %v2 : tensor<?x3xf32> into !ember.mut<tensor<?x3xf32>>
  // y[:, 1:7][:, 0:1] += 1
  %v3 = ember.mut.slice %v1[0, 0] [%b, 1] [1, 1] : !ember.mut<tensor<?x6xf32>> -> !ember.mut<tensor<?x1xf32>>
  %cur = ember.mut.to_tensor %v3 : !ember.mut<tensor<?x1xf32>> -> tensor<?x1xf32>
  %one = arith.constant dense<1.0> : tensor<1x1xf32>
  %inc = tosa.add %cur, %one : (tensor<?x1xf32>, tensor<1x1xf32>) -> tensor<?x1xf32>
  ember.mut.copy %inc into %v3 : tensor<?x1xf32> into !ember.mut<tensor<?x1xf32>>
  %y = ember.mut.to_tensor %ym : !ember.mut<tensor<?x8xf32>> -> tensor<?x8xf32>
  // c = x.clone(); c[:, :] = y
  %cm = ember.mut.from_tensor %x : tensor<?x8xf32> -> !ember.mut<tensor<?x8xf32>>
  %full = ember.mut.slice %cm[0, 0] [%b, 8] [1, 1] : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x8xf32>>
  ember.mut.copy %y into %full : tensor<?x8xf32> into !ember.mut<tensor<?x8xf32>>
  %c = ember.mut.to_tensor %cm : !ember.mut<tensor<?x8xf32>> -> tensor<?x8xf32>
  // t = s.clone(); t[1:4][0:2, 1:6:2] = -s[0:2, 0:3]
  %tm = ember.mut.from_tensor %s : tensor<4x6xf32> -> !ember.mut<tensor<4x6xf32>>
  %t1 = ember.mut.slice %tm[1, 0] [3, 6] [1, 1] : !ember.mut<tensor<4x6xf32>> -> !ember.mut<tensor<3x6xf32>>
  %t2 = ember.mut.slice %t1[0, 1] [2, 3] [1, 2] : !ember.mut<tensor<3x6xf32>> -> !ember.mut<tensor<2x3xf32>>
  %sv = tensor.extract_slice %s[0, 0] [2, 3] [1, 1] : tensor<4x6xf32> to tensor<2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %neg = tosa.negate %sv, %zp, %zp : (tensor<2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  ember.mut.copy %neg into %t2 : tensor<2x3xf32> into !ember.mut<tensor<2x3xf32>>
  %t = ember.mut.to_tensor %tm : !ember.mut<tensor<4x6xf32>> -> tensor<4x6xf32>
  return %y, %c, %t : tensor<?x8xf32>, tensor<?x8xf32>, tensor<4x6xf32>
}
