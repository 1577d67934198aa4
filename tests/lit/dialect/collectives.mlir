// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every collective op and of ember.wait / ember.ready, in the
// pretty and the generic form.

// CHECK-LABEL: func.func @kjt_all_to_all
// CHECK: %[[S:.*]] = ember.kjt_all_to_all.splits %{{.*}} key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
// CHECK: %[[SW:.*]] = ember.wait %[[S]] : !ember.awaitable<tensor<2x3xi64>>
// CHECK: %[[T:.*]] = ember.kjt_all_to_all.tensors %{{.*}}, %[[SW]] key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
// CHECK: ember.wait %[[T]] : !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
// GENERIC-LABEL: sym_name = "kjt_all_to_all"
// GENERIC: "ember.kjt_all_to_all.splits"(%{{.*}}) <{group = #ember.group<ranks = [0, 1]>, key_splits = array<i64: 2, 1>}>
// GENERIC: "ember.wait"
// GENERIC: "ember.kjt_all_to_all.tensors"(%{{.*}}, %{{.*}}) <{group = #ember.group<ranks = [0, 1]>, key_splits = array<i64: 2, 1>}>
func.func @kjt_all_to_all(%kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>)
    -> !ember.kjt<["a", "b"], values = i64, lengths = i32> {
  %s = ember.kjt_all_to_all.splits %kjt key_splits [2, 1] group<ranks = [0, 1]>
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
  %splits = ember.wait %s : !ember.awaitable<tensor<2x3xi64>>
  %t = ember.kjt_all_to_all.tensors %kjt, %splits key_splits [2, 1] group<ranks = [0, 1]>
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64>
      -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  %out = ember.wait %t : !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return %out : !ember.kjt<["a", "b"], values = i64, lengths = i32>
}

// Weighted, variable-batch KJT; the second rank's keys; known batch sizes.
// CHECK-LABEL: func.func @kjt_all_to_all_weighted
// CHECK: ember.kjt_all_to_all.splits %{{.*}} key_splits [1, 2] group<ranks = [4, 5], ranks_per_node = 2> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i64, weighted, variable_batch> -> !ember.awaitable<tensor<2x4xi64>>
// CHECK: ember.kjt_all_to_all.tensors %{{.*}}, %{{.*}} key_splits [1, 2] batch_size_per_rank [3, 5] group<ranks = [4, 5], ranks_per_node = 2> : {{.*}}, tensor<2x4xi64> -> !ember.awaitable<!ember.kjt<["b", "c"], values = i64, lengths = i64, weighted, variable_batch>>
// GENERIC-LABEL: sym_name = "kjt_all_to_all_weighted"
// GENERIC: "ember.kjt_all_to_all.tensors"(%{{.*}}, %{{.*}}) <{batch_size_per_rank = array<i64: 3, 5>, group = #ember.group<ranks = [4, 5], ranks_per_node = 2>, key_splits = array<i64: 1, 2>}>
func.func @kjt_all_to_all_weighted(
    %kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i64, weighted, variable_batch>)
    -> !ember.awaitable<!ember.kjt<["b", "c"], values = i64, lengths = i64, weighted, variable_batch>> {
  %s = ember.kjt_all_to_all.splits %kjt key_splits [1, 2] group<ranks = [4, 5], ranks_per_node = 2>
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i64, weighted, variable_batch>
      -> !ember.awaitable<tensor<2x4xi64>>
  %splits = ember.wait %s : !ember.awaitable<tensor<2x4xi64>>
  %t = ember.kjt_all_to_all.tensors %kjt, %splits key_splits [1, 2] batch_size_per_rank [3, 5]
      group<ranks = [4, 5], ranks_per_node = 2>
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i64, weighted, variable_batch>, tensor<2x4xi64>
      -> !ember.awaitable<!ember.kjt<["b", "c"], values = i64, lengths = i64, weighted, variable_batch>>
  return %t : !ember.awaitable<!ember.kjt<["b", "c"], values = i64, lengths = i64, weighted, variable_batch>>
}

// CHECK-LABEL: func.func @pooled
// CHECK: ember.pooled_all_to_all %{{.*}} dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
// CHECK: ember.pooled_all_to_all %{{.*}} dim_per_rank [16, 32] batch_size_per_rank [2, 6] group<ranks = [0, 1]> codec fp16 : tensor<8x16xf32> -> !ember.awaitable<tensor<6x48xf32>>
// CHECK: ember.pooled_all_to_all %{{.*}} dim_per_rank [16, 32] group<ranks = [0, 1]> codec bf16 : tensor<?x32xf32> -> !ember.awaitable<tensor<?x48xf32>>
// GENERIC-LABEL: sym_name = "pooled"
// GENERIC: "ember.pooled_all_to_all"(%{{.*}}) <{dim_per_rank = array<i64: 16, 32>, group = #ember.group<ranks = [0, 1]>}>
// GENERIC: "ember.pooled_all_to_all"(%{{.*}}) <{batch_size_per_rank = array<i64: 2, 6>, codec = #ember<codec fp16>, dim_per_rank = array<i64: 16, 32>, group = #ember.group<ranks = [0, 1]>}>
func.func @pooled(%x: tensor<8x16xf32>, %y: tensor<?x32xf32>)
    -> (tensor<4x48xf32>, tensor<6x48xf32>, tensor<?x48xf32>) {
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]>
      : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
  %b = ember.pooled_all_to_all %x dim_per_rank [16, 32] batch_size_per_rank [2, 6]
      group<ranks = [0, 1]> codec fp16
      : tensor<8x16xf32> -> !ember.awaitable<tensor<6x48xf32>>
  %c = ember.pooled_all_to_all %y dim_per_rank [16, 32] group<ranks = [0, 1]> codec bf16
      : tensor<?x32xf32> -> !ember.awaitable<tensor<?x48xf32>>
  %0 = ember.wait %a : !ember.awaitable<tensor<4x48xf32>>
  %1 = ember.wait %b : !ember.awaitable<tensor<6x48xf32>>
  %2 = ember.wait %c : !ember.awaitable<tensor<?x48xf32>>
  return %0, %1, %2 : tensor<4x48xf32>, tensor<6x48xf32>, tensor<?x48xf32>
}

// CHECK-LABEL: func.func @sequence
// CHECK: ember.sequence_all_to_all %{{.*}}, %{{.*}} key_splits [1, 0] group<ranks = [0, 1]> codec fp8 : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xf32>>
// GENERIC-LABEL: sym_name = "sequence"
// GENERIC: "ember.sequence_all_to_all"(%{{.*}}, %{{.*}}) <{codec = #ember<codec fp8>, group = #ember.group<ranks = [0, 1]>, key_splits = array<i64: 1, 0>}>
func.func @sequence(%emb: tensor<?x16xf32>, %sent: !ember.kjt<["a"], values = i64, lengths = i64>)
    -> !ember.awaitable<tensor<?x16xf32>> {
  %a = ember.sequence_all_to_all %emb, %sent key_splits [1, 0] group<ranks = [0, 1]> codec fp8
      : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xf32>>
  return %a : !ember.awaitable<tensor<?x16xf32>>
}

// CHECK-LABEL: func.func @reduce_scatter
// CHECK: ember.reduce_scatter sum %{{.*}} group<ranks = [0, 1]> : tensor<8x64xf32> -> !ember.awaitable<tensor<4x64xf32>>
// CHECK: ember.reduce_scatter mean %{{.*}} splits [3, 5] group<ranks = [0, 1]> codec bf16 : tensor<8x64xf32> -> !ember.awaitable<tensor<5x64xf32>>
// CHECK: ember.reduce_scatter max %{{.*}} group<ranks = [0, 1]> : tensor<?x64xi32> -> !ember.awaitable<tensor<?x64xi32>>
// GENERIC-LABEL: sym_name = "reduce_scatter"
// GENERIC: "ember.reduce_scatter"(%{{.*}}) <{group = #ember.group<ranks = [0, 1]>, reduction = #ember<reduce sum>}>
// GENERIC: "ember.reduce_scatter"(%{{.*}}) <{codec = #ember<codec bf16>, group = #ember.group<ranks = [0, 1]>, reduction = #ember<reduce mean>, splits = array<i64: 3, 5>}>
func.func @reduce_scatter(%x: tensor<8x64xf32>, %i: tensor<?x64xi32>)
    -> (!ember.awaitable<tensor<4x64xf32>>, !ember.awaitable<tensor<5x64xf32>>,
        !ember.awaitable<tensor<?x64xi32>>) {
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]>
      : tensor<8x64xf32> -> !ember.awaitable<tensor<4x64xf32>>
  %b = ember.reduce_scatter mean %x splits [3, 5] group<ranks = [0, 1]> codec bf16
      : tensor<8x64xf32> -> !ember.awaitable<tensor<5x64xf32>>
  %c = ember.reduce_scatter max %i group<ranks = [0, 1]>
      : tensor<?x64xi32> -> !ember.awaitable<tensor<?x64xi32>>
  return %a, %b, %c : !ember.awaitable<tensor<4x64xf32>>, !ember.awaitable<tensor<5x64xf32>>,
      !ember.awaitable<tensor<?x64xi32>>
}

// The reduction defaults to sum in the generic form.
// CHECK-LABEL: func.func @reduce_scatter_default
// CHECK: ember.reduce_scatter sum %{{.*}} group<ranks = [0, 1]> : tensor<8x64xf32> -> !ember.awaitable<tensor<4x64xf32>>
func.func @reduce_scatter_default(%x: tensor<8x64xf32>) -> !ember.awaitable<tensor<4x64xf32>> {
  %a = "ember.reduce_scatter"(%x) <{group = #ember.group<ranks = [0, 1]>}>
      : (tensor<8x64xf32>) -> !ember.awaitable<tensor<4x64xf32>>
  return %a : !ember.awaitable<tensor<4x64xf32>>
}

// CHECK-LABEL: func.func @all_gather
// CHECK: ember.all_gather %{{.*}} group<ranks = [0, 1, 2, 3]> : tensor<2x16xf32> -> !ember.awaitable<tensor<8x16xf32>>
// CHECK: ember.all_gather %{{.*}} group<ranks = [0, 1, 2, 3]> codec fp16 : tensor<?x16xbf16> -> !ember.awaitable<tensor<?x16xbf16>>
// GENERIC-LABEL: sym_name = "all_gather"
// GENERIC: "ember.all_gather"(%{{.*}}) <{group = #ember.group<ranks = [0, 1, 2, 3]>}>
func.func @all_gather(%x: tensor<2x16xf32>, %y: tensor<?x16xbf16>)
    -> (!ember.awaitable<tensor<8x16xf32>>, !ember.awaitable<tensor<?x16xbf16>>) {
  %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]>
      : tensor<2x16xf32> -> !ember.awaitable<tensor<8x16xf32>>
  %b = ember.all_gather %y group<ranks = [0, 1, 2, 3]> codec fp16
      : tensor<?x16xbf16> -> !ember.awaitable<tensor<?x16xbf16>>
  return %a, %b : !ember.awaitable<tensor<8x16xf32>>, !ember.awaitable<tensor<?x16xbf16>>
}

// CHECK-LABEL: func.func @all_reduce
// CHECK: ember.all_reduce sum %{{.*}} group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
// CHECK: ember.all_reduce min %{{.*}} group<ranks = [0, 1]> codec none : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
// CHECK: ember.all_reduce max %{{.*}} group<ranks = [0, 1]> : tensor<3xi64> -> !ember.awaitable<tensor<3xi64>>
// GENERIC-LABEL: sym_name = "all_reduce"
// GENERIC: "ember.all_reduce"(%{{.*}}) <{group = #ember.group<ranks = [0, 1]>, reduction = #ember<reduce sum>}>
// GENERIC: "ember.all_reduce"(%{{.*}}) <{codec = #ember<codec none>, group = #ember.group<ranks = [0, 1]>, reduction = #ember<reduce min>}>
func.func @all_reduce(%x: tensor<4x8xf32>, %n: tensor<3xi64>)
    -> (!ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>,
        !ember.awaitable<tensor<3xi64>>) {
  %a = ember.all_reduce sum %x group<ranks = [0, 1]>
      : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %b = ember.all_reduce min %x group<ranks = [0, 1]> codec none
      : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %c = ember.all_reduce max %n group<ranks = [0, 1]>
      : tensor<3xi64> -> !ember.awaitable<tensor<3xi64>>
  return %a, %b, %c : !ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>,
      !ember.awaitable<tensor<3xi64>>
}

// CHECK-LABEL: func.func @ready_wait
// CHECK: %[[R:.*]] = ember.ready %{{.*}} : tensor<4x8xf32>
// CHECK: ember.wait %[[R]] : !ember.awaitable<tensor<4x8xf32>>
// CHECK: ember.ready %{{.*}} : !ember.kjt<["a"], values = i64, lengths = i32>
// GENERIC-LABEL: sym_name = "ready_wait"
// GENERIC: "ember.ready"(%{{.*}}) : (tensor<4x8xf32>) -> !ember.awaitable<tensor<4x8xf32>>
// GENERIC: "ember.wait"(%{{.*}}) : (!ember.awaitable<tensor<4x8xf32>>) -> tensor<4x8xf32>
func.func @ready_wait(%x: tensor<4x8xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i32>)
    -> (tensor<4x8xf32>, !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>) {
  %r = ember.ready %x : tensor<4x8xf32>
  %v = ember.wait %r : !ember.awaitable<tensor<4x8xf32>>
  %rk = ember.ready %k : !ember.kjt<["a"], values = i64, lengths = i32>
  return %v, %rk : tensor<4x8xf32>, !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>
}

// Collectives communicate: CSE must neither merge two identical ones nor drop
// an unused one.
// CSE-LABEL: func.func @not_merged
// CSE-COUNT-2: ember.all_reduce
// CSE: ember.all_gather
// RUN: ember-opt %s -cse | FileCheck %s --check-prefix=CSE
func.func @not_merged(%x: tensor<4x8xf32>) -> (!ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>) {
  %a = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %b = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %unused = ember.all_gather %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<8x8xf32>>
  return %a, %b : !ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>
}

// Batch sizes from the KJT each rank sent (known at run time only).
// Received columns put in another order: position 0 sends a (4 columns)
// and c (4), position 1 b (8); the result holds a, b, c.
// CHECK-LABEL: func.func @segments
// CHECK: ember.pooled_all_to_all %{{.*}} dim_per_rank [8, 8] segment_dims [4, 4, 8] segment_columns [0, 12, 4] group<ranks = [0, 1]> codec fp16 : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
// GENERIC-LABEL: sym_name = "segments"
// GENERIC: "ember.pooled_all_to_all"(%{{.*}}) <{codec = #ember<codec fp16>, dim_per_rank = array<i64: 8, 8>, group = #ember.group<ranks = [0, 1]>, segment_columns = array<i64: 0, 12, 4>, segment_dims = array<i64: 4, 4, 8>}>
func.func @segments(%x: tensor<8x8xf32>) -> !ember.awaitable<tensor<4x16xf32>> {
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8]
      segment_dims [4, 4, 8] segment_columns [0, 12, 4]
      group<ranks = [0, 1]> codec fp16 : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return %a : !ember.awaitable<tensor<4x16xf32>>
}

// CHECK-LABEL: func.func @batch_of
// CHECK: ember.pooled_all_to_all %{{.*}} batch_of(%{{.*}} : !ember.kjt<["a", "b"], values = i64, lengths = i64>) dim_per_rank [16, 0] group<ranks = [0, 1]> : tensor<?x16xf32> -> !ember.awaitable<tensor<?x16xf32>>
// CHECK: ember.reduce_scatter sum %{{.*}} batch_of(%{{.*}} : !ember.kjt<["a", "b"], values = i64, lengths = i64>) group<ranks = [0, 1]> : tensor<?x8xf32> -> !ember.awaitable<tensor<?x8xf32>>
// GENERIC-LABEL: sym_name = "batch_of"
// GENERIC: "ember.pooled_all_to_all"(%{{.*}}, %{{.*}}) <{dim_per_rank = array<i64: 16, 0>, group = #ember.group<ranks = [0, 1]>}>
func.func @batch_of(%x: tensor<?x16xf32>, %y: tensor<?x8xf32>,
                    %k: !ember.kjt<["a", "b"], values = i64, lengths = i64>)
    -> (!ember.awaitable<tensor<?x16xf32>>, !ember.awaitable<tensor<?x8xf32>>) {
  %a = ember.pooled_all_to_all %x batch_of(%k : !ember.kjt<["a", "b"], values = i64, lengths = i64>)
      dim_per_rank [16, 0] group<ranks = [0, 1]>
      : tensor<?x16xf32> -> !ember.awaitable<tensor<?x16xf32>>
  %b = ember.reduce_scatter sum %y batch_of(%k : !ember.kjt<["a", "b"], values = i64, lengths = i64>)
      group<ranks = [0, 1]> : tensor<?x8xf32> -> !ember.awaitable<tensor<?x8xf32>>
  return %a, %b : !ember.awaitable<tensor<?x16xf32>>, !ember.awaitable<tensor<?x8xf32>>
}
