// RUN: ember-opt %s -canonicalize -split-input-file | FileCheck %s

// ember.wait of ember.ready folds to the ready value; the ready then dies.
// CHECK-LABEL: func.func @wait_of_ready
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: ember.ready
// CHECK-NOT: ember.wait
// CHECK: return %[[X]]
func.func @wait_of_ready(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = ember.ready %x : tensor<4x8xf32>
  %v = ember.wait %r : !ember.awaitable<tensor<4x8xf32>>
  return %v : tensor<4x8xf32>
}

// -----

// A wait of a real collective stays.
// CHECK-LABEL: func.func @wait_of_collective
// CHECK: %[[A:.*]] = ember.all_reduce sum
// CHECK: %[[V:.*]] = ember.wait %[[A]]
// CHECK: return %[[V]]
func.func @wait_of_collective(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %v = ember.wait %a : !ember.awaitable<tensor<4x8xf32>>
  return %v : tensor<4x8xf32>
}

// -----

// On a group of one rank the identity collectives become ember.ready, and
// their waits then fold away.
// CHECK-LABEL: func.func @single_rank
// CHECK-SAME: (%[[X:[a-z0-9]*]]: tensor<4x8xf32>, %[[E:[a-z0-9]*]]: tensor<?x16xf32>, %[[S:[a-z0-9]*]]: !ember.kjt
// CHECK-NOT: ember.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[E]]
func.func @single_rank(%x: tensor<4x8xf32>, %e: tensor<?x16xf32>, %s: !ember.kjt<["a"], values = i64, lengths = i64>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x16xf32>) {
  %0 = ember.all_reduce mean %x group<ranks = [3]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %1 = ember.all_gather %x group<ranks = [3]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %2 = ember.reduce_scatter sum %x group<ranks = [3]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %3 = ember.reduce_scatter max %x splits [4] group<ranks = [3]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %4 = ember.pooled_all_to_all %x dim_per_rank [8] batch_size_per_rank [4] group<ranks = [3]>
      : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %5 = ember.all_gather %x group<ranks = [3]> codec none
      : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %6 = ember.sequence_all_to_all %e, %s key_splits [1] group<ranks = [3]>
      : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xf32>>
  %w0 = ember.wait %0 : !ember.awaitable<tensor<4x8xf32>>
  %w1 = ember.wait %1 : !ember.awaitable<tensor<4x8xf32>>
  %w2 = ember.wait %2 : !ember.awaitable<tensor<4x8xf32>>
  %w3 = ember.wait %3 : !ember.awaitable<tensor<4x8xf32>>
  %w4 = ember.wait %4 : !ember.awaitable<tensor<4x8xf32>>
  %w5 = ember.wait %5 : !ember.awaitable<tensor<4x8xf32>>
  %w6 = ember.wait %6 : !ember.awaitable<tensor<?x16xf32>>
  return %w0, %w1, %w2, %w3, %w4, %w5, %w6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
      tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<?x16xf32>
}

// -----

// A single-rank collective whose awaitable is returned becomes ember.ready.
// CHECK-LABEL: func.func @single_rank_to_ready
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = ember.ready %[[X]] : tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @single_rank_to_ready(%x: tensor<4x8xf32>) -> !ember.awaitable<tensor<4x8xf32>> {
  %0 = ember.all_reduce sum %x group<ranks = [0]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  return %0 : !ember.awaitable<tensor<4x8xf32>>
}

// -----

// KJT all-to-all on one rank: the tensors phase is the identity; the splits
// phase computes a new value and stays.
// CHECK-LABEL: func.func @single_rank_kjt
// CHECK-SAME: (%[[K:.*]]: !ember.kjt<["a", "b"], values = i64, lengths = i32>)
// CHECK: ember.kjt_all_to_all.splits
// CHECK-NOT: ember.kjt_all_to_all.tensors
// CHECK: return %[[K]]
func.func @single_rank_kjt(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>)
    -> !ember.kjt<["a", "b"], values = i64, lengths = i32> {
  %s = ember.kjt_all_to_all.splits %k key_splits [2] group<ranks = [0]>
      : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.awaitable<tensor<1x3xi64>>
  %splits = ember.wait %s : !ember.awaitable<tensor<1x3xi64>>
  %t = ember.kjt_all_to_all.tensors %k, %splits key_splits [2] group<ranks = [0]>
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, tensor<1x3xi64>
      -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  %out = ember.wait %t : !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return %out : !ember.kjt<["a", "b"], values = i64, lengths = i32>
}

// -----

// Not folded: a codec rounds the values even on one rank; a result type that
// differs from the input (static vs dynamic) would need a cast; two ranks; a
// pooled all-to-all that swaps its columns.
// CHECK-LABEL: func.func @not_folded
// CHECK: ember.all_reduce sum %{{.*}} group<ranks = [0]> codec fp16
// CHECK: ember.all_gather %{{.*}} group<ranks = [0]> : tensor<4x8xf32> -> !ember.awaitable<tensor<?x8xf32>>
// CHECK: ember.all_reduce sum %{{.*}} group<ranks = [0, 1]>
// CHECK: ember.pooled_all_to_all %{{.*}} segment_dims [2, 6] segment_columns [6, 0]
// CHECK-NOT: ember.ready
func.func @not_folded(%x: tensor<4x8xf32>)
    -> (!ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<?x8xf32>>,
        !ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>) {
  %0 = ember.all_reduce sum %x group<ranks = [0]> codec fp16 : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %1 = ember.all_gather %x group<ranks = [0]> : tensor<4x8xf32> -> !ember.awaitable<tensor<?x8xf32>>
  %2 = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %3 = ember.pooled_all_to_all %x dim_per_rank [8] segment_dims [2, 6] segment_columns [6, 0]
      group<ranks = [0]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  return %0, %1, %2, %3 : !ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<?x8xf32>>,
      !ember.awaitable<tensor<4x8xf32>>, !ember.awaitable<tensor<4x8xf32>>
}

// -----

// Segments in wire order are no permutation: one rank still folds.
// CHECK-LABEL: func.func @segments_in_wire_order
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = ember.ready %[[X]]
// CHECK: return %[[R]]
func.func @segments_in_wire_order(%x: tensor<4x8xf32>) -> !ember.awaitable<tensor<4x8xf32>> {
  %0 = ember.pooled_all_to_all %x dim_per_rank [8] segment_dims [2, 6] segment_columns [0, 2]
      group<ranks = [0]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  return %0 : !ember.awaitable<tensor<4x8xf32>>
}

// -----

// An unused collective is kept (it communicates); an unused ready is dropped.
// CHECK-LABEL: func.func @unused
// CHECK: ember.all_gather
// CHECK-NOT: ember.ready
func.func @unused(%x: tensor<4x8xf32>) {
  %0 = ember.all_gather %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<8x8xf32>>
  %1 = ember.ready %x : tensor<4x8xf32>
  return
}
