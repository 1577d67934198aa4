// Two tables declared as module symbols with their rows inline, looked up
// through ember.table.ref (the form of hand-written and tool-made modules).
module {
  ember.table @users : !ember.table<5x3, f32> init = dense<[[0.0, 0.5, 1.0], [1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0], [4.0, 4.5, 5.0]]> : tensor<5x3xf32>
  ember.table @items : !ember.table<3x3, f32> init = dense<[[-1.0, 0.0, 1.0], [2.0, -2.0, 0.25], [8.0, 16.0, 32.0]]> : tensor<3x3xf32>
  func.func @main(%ui: tensor<?xi64> {onnx.name = "user_ids"}, %uo: tensor<?xi64> {onnx.name = "user_offsets", onnx.dim_params = ["B"]},
                  %ii: tensor<?xi64> {onnx.name = "item_ids"}, %io: tensor<?xi64> {onnx.name = "item_offsets"}) -> (tensor<?x3xf32> {onnx.name = "out"}) {
    %u = ember.table.ref @users : !ember.table<5x3, f32>
    %i = ember.table.ref @items : !ember.table<3x3, f32>
    %a = ember.embedding_bag %u[%ui, %uo] pooling = sum : !ember.table<5x3, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x3xf32>
    %b = ember.embedding_bag %i[%ii, %io] pooling = mean : !ember.table<3x3, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x3xf32>
    %s = tosa.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    return %s : tensor<?x3xf32>
  }
}
