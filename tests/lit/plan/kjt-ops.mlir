// KJTs, keyed tensors and embedding-bag collections in the plan's text form
// (compiler/plan/PlanKjtOps.cpp): a KJT input is a values slot and a
// lengths slot ([K * B]); kjt.split is one kjt_split whose absent weights
// outputs are `-`; offsets are lengths_to_offsets (int64) and a cast back to
// the lengths' type; the collection, after ember-group-tables, is one
// kjt_permute + grouped_embedding_bag per table group and a concat of the
// pooled rows; keyed_tensor.values aliases them (identity) and
// keyed_tensor.get slices its key's columns.

// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - | FileCheck %s

// CHECK:      input kjt "features": keys ["a", "b", "c"], values i64, lengths i32, batch B
// CHECK-NEXT: output "offsets_c": i32[[[N:d[0-9]+]]]
// CHECK-NEXT: output "pooled": f32[B, 6]
// CHECK-NEXT: output "b_only": f32[B, 4]
// CHECK-NEXT: rank 0: {{[0-9]+}} slots
// CHECK-NEXT:   input kjt "features": values %[[V:[0-9]+]], lengths %[[L:[0-9]+]]
// CHECK-NEXT:   const %[[TB:[0-9]+]] "tb": f32[10, 4] (160 bytes)
// CHECK-NEXT:   const %[[TA:[0-9]+]] "ta": f32[8, 2] (64 bytes)
// CHECK-NEXT:   %[[ABV:[0-9]+]]: i64[{{d[0-9]+}}], %[[ABL:[0-9]+]]: i32[2*B], -, %[[CV:[0-9]+]]: i64[{{d[0-9]+}}], %[[CL:[0-9]+]]: i32[B], - = kjt_split(%[[V]], %[[L]], -) {key_counts = [2, 1]}  // split
// CHECK-NEXT:   %[[OFF:[0-9]+]]: i64[[[N]]] = lengths_to_offsets(%[[CL]])  // offsets_c
// CHECK-NEXT:   %[[OFF32:[0-9]+]]: i32[[[N]]] = cast(%[[OFF]]) {to = "int32"}  // offsets_c
// CHECK-NEXT:   %[[BV:[0-9]+]]: i64[{{d[0-9]+}}], %[[BL:[0-9]+]]: i32[B] = kjt_permute(%[[ABV]], %[[ABL]], -) {permutation = [1], num_keys = 2}  // ebc
// CHECK-NEXT:   %[[PB:[0-9]+]]: f32[B, 4] = grouped_embedding_bag(%[[BV]], %[[BL]], -, %[[TB]]) {feature_tables = [0], pooling = ["sum"], table_formats = ["float32"], table_dims = [4], output_offsets = [0], output_width = 4, feature_names = ["b"]}  // ebc
// CHECK-NEXT:   %[[AV:[0-9]+]]: i64[{{d[0-9]+}}], %[[AL:[0-9]+]]: i32[B] = kjt_permute(%[[ABV]], %[[ABL]], -) {permutation = [0], num_keys = 2}  // ebc
// CHECK-NEXT:   %[[PA:[0-9]+]]: f32[B, 2] = grouped_embedding_bag(%[[AV]], %[[AL]], -, %[[TA]]) {feature_tables = [0], pooling = ["mean"], table_formats = ["float32"], table_dims = [2], output_offsets = [0], output_width = 2, feature_names = ["a"]}  // ebc
// CHECK-NEXT:   %[[CAT:[0-9]+]]: f32[B, 6] = concat(%[[PB]], %[[PA]]) {axis = 1}  // ebc
// CHECK-NEXT:   %[[VALS:[0-9]+]]: f32[B, 6] = identity(%[[CAT]])  // values
// CHECK-NEXT:   %[[GB:[0-9]+]]: f32[B, 4] = slice(%[[PB]]) {starts = [0], ends = [4], axes = [1]}  // get_b
// CHECK-NEXT:   output "offsets_c" = %[[OFF32]]
// CHECK-NEXT:   output "pooled" = %[[VALS]]
// CHECK-NEXT:   output "b_only" = %[[GB]]
!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
!ab = !ember.kjt<["a", "b"], values = i64, lengths = i32>
!c = !ember.kjt<["c"], values = i64, lengths = i32>
!ba = !ember.kjt<["b", "a"], values = i64, lengths = i32>
module {
  func.func @main(%k: !kjt {onnx.name = "features"})
      -> (tensor<?xi32> {onnx.name = "offsets_c"}, tensor<?x6xf32> {onnx.name = "pooled"}, tensor<?x4xf32> {onnx.name = "b_only"}) {
    %s:2 = ember.kjt.split %k [2, 1] : !kjt -> !ab, !c loc("split")
    %oc = ember.kjt.offsets %s#1 : !c -> tensor<?xi32> loc("offsets_c")
    %p = ember.kjt.permute %s#0 [1, 0] : !ab -> !ba loc("permute")
    %w0 = arith.constant dense<1.0> : tensor<10x4xf32> loc("tb")
    %w1 = arith.constant dense<2.0> : tensor<8x2xf32> loc("ta")
    %t0 = ember.table.from_tensor %w0 : tensor<10x4xf32> -> !ember.table<10x4, f32>
    %t1 = ember.table.from_tensor %w1 : tensor<8x2xf32> -> !ember.table<8x2, f32>
    %kt = ember.embedding_bag_collection %p tables(%t0, %t1) feature_tables = [0, 1] pooling = [sum, mean]
        : !ba, !ember.table<10x4, f32>, !ember.table<8x2, f32> -> !ember.keyed_tensor<["b" : 4, "a" : 2], f32> loc("ebc")
    %v = ember.keyed_tensor.values %kt : !ember.keyed_tensor<["b" : 4, "a" : 2], f32> -> tensor<?x6xf32> loc("values")
    %g = ember.keyed_tensor.get %kt["b"] : !ember.keyed_tensor<["b" : 4, "a" : 2], f32> -> tensor<?x4xf32> loc("get_b")
    return %oc, %v, %g : tensor<?xi32>, tensor<?x6xf32>, tensor<?x4xf32>
  }
}
