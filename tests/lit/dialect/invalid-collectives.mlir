// RUN: ember-opt %s -split-input-file -verify-diagnostics
// RUN: not ember-opt %s -split-input-file 2>&1 | FileCheck %s --check-prefix=NOT

// Every verifier error of the collective ops, then malformed input.
// ember-opt must fail (non-zero exit) on this file and say why:
// NOT: 'key_splits' has 3 entries but the group has 2 ranks
// NOT: custom op 'ember.all_reduce' expected valid keyword

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>) {
  // expected-error @+1 {{'key_splits' has 3 entries but the group has 2 ranks}}
  %s = ember.kjt_all_to_all.splits %k key_splits [1, 1, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>) {
  // expected-error @+1 {{'key_splits' entry 1 is negative (-1)}}
  %s = ember.kjt_all_to_all.splits %k key_splits [4, -1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>) {
  // expected-error @+1 {{'key_splits' sends 2 keys in all but the input KJT has 3}}
  %s = ember.kjt_all_to_all.splits %k key_splits [1, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result must be an awaitable of 'tensor<2x3xi64>' (one row per rank: lengths, values, batch size), got '!ember.awaitable<tensor<2x4xi64>>'}}
  %s = ember.kjt_all_to_all.splits %k key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x4xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32, weighted>) {
  // expected-error @+1 {{result must be an awaitable of 'tensor<2x4xi64>' (one row per rank: lengths, values, weights, batch size), got '!ember.awaitable<tensor<2x3xi64>>'}}
  %s = ember.kjt_all_to_all.splits %k key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32, weighted> -> !ember.awaitable<tensor<2x3xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{'key_splits' has 1 entries but the group has 2 ranks}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [3] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{'key_splits' sends 4 keys in all but the input KJT has 3}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 2] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x4xi64>) {
  // expected-error @+1 {{'splits' must be 'tensor<2x3xi64>' (one row per rank: lengths, values, batch size), got 'tensor<2x4xi64>'}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x4xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{'batch_size_per_rank' has 1 entries but the group has 2 ranks}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] batch_size_per_rank [4] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{'batch_size_per_rank' entry 1 is negative (-4)}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] batch_size_per_rank [4, -4] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result must be an awaitable of a KJT, got '!ember.awaitable<tensor<4xi64>>'}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<tensor<4xi64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result keys ["b", "a"] are not the keys of any rank: with key_splits [2, 1] the ranks receive ["a", "b"], ["c"]}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["b", "a"], values = i64, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result values type 'i32' differs from the input's 'i64'}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i32, lengths = i32>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result lengths type 'i64' differs from the input's 'i32'}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i64>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result must be unweighted like the input}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32, weighted>>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %s: tensor<2x3xi64>) {
  // expected-error @+1 {{result must not be variable_batch like the input}}
  %t = ember.kjt_all_to_all.tensors %k, %s key_splits [2, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'dim_per_rank' has 3 entries but the group has 2 ranks}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32, 8] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'batch_size_per_rank' entry 0 is negative (-1)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] batch_size_per_rank [-1, 9] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16x2xf32>) {
  // expected-error @+1 {{input must be 2-D [global batch, local dims], got 'tensor<8x16x2xf32>'}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16x2xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result must be an awaitable of a ranked tensor, got '!ember.awaitable<!ember.jagged<f32>>'}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<!ember.jagged<f32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result must be 2-D [local batch, all dims], got 'tensor<192xf32>'}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<192xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{takes segment_dims and segment_columns together, got only segment_dims}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{takes segment_dims and segment_columns together, got only segment_columns}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_columns [0, 8] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{has 2 segment_dims but 1 segment_columns}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8] segment_columns [0] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment_dims [8, 4] end before the columns of position 1 (dim_per_rank = [8, 8])}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 4] segment_columns [0, 8] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment_dims[1] = 8 crosses the end of position 0's columns (4 of its dim_per_rank 8 left)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [4, 8, 4] segment_columns [0, 4, 12] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment_dims[0] = 0 must be positive}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [0, 8, 8] segment_columns [0, 0, 8] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment_dims [8, 8, 2] has more segments than the columns of dim_per_rank [8, 8] (2)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8, 2] segment_columns [0, 8, 14] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment 1 covers result columns [9, 17), outside [0, 16)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8] segment_columns [0, 9] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segment 0 covers result columns [-1, 7), outside [0, 16)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8] segment_columns [-1, 8] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{segments 1 and 0 overlap in the result (columns 4 to 8)}}
  %a = ember.pooled_all_to_all %x dim_per_rank [8, 8] segment_dims [8, 8] segment_columns [4, 0] group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf16>>
  return
}

// -----

func.func @f(%x: tensor<8x16xi64>) {
  // expected-error @+1 {{codec fp16 needs a floating-point payload, got element type 'i64'}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> codec fp16 : tensor<8x16xi64> -> !ember.awaitable<tensor<4x48xi64>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result has 40 columns but dim_per_rank sums to 48}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x40xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x20xf32>) {
  // expected-error @+1 {{input has 20 columns but no rank of the group contributes 20 (dim_per_rank = [16, 32])}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x20xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<7x16xf32>) {
  // expected-error @+1 {{input has 7 rows, which do not split evenly over 2 ranks}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<7x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result has 8 rows but an even split of 8 rows over 2 ranks gives 4}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<8x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<6x16xf32>) {
  // expected-error @+1 {{input has 6 rows but batch_size_per_rank sums to 8}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] batch_size_per_rank [4, 4] group<ranks = [0, 1]> : tensor<6x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{result has 3 rows but no rank of the group has batch size 3 (batch_size_per_rank = [2, 6])}}
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 32] batch_size_per_rank [2, 6] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<3x48xf32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{'key_splits' sends 2 keys in all but the input KJT has 1}}
  %a = ember.sequence_all_to_all %x, %k key_splits [1, 1] group<ranks = [0, 1]> : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<f32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{input must have a row dimension (rank >= 1), got 'tensor<f32>'}}
  %a = ember.sequence_all_to_all %x, %k key_splits [0, 1] group<ranks = [0, 1]> : tensor<f32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?xf32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{result dim 1 is 8 but the input's is 16}}
  %a = ember.sequence_all_to_all %x, %k key_splits [0, 1] group<ranks = [0, 1]> : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x8xf32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{result has rank 3 but the input has rank 2}}
  %a = ember.sequence_all_to_all %x, %k key_splits [0, 1] group<ranks = [0, 1]> : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16x1xf32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xi32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{codec bf16 needs a floating-point payload, got element type 'i32'}}
  %a = ember.sequence_all_to_all %x, %k key_splits [0, 1] group<ranks = [0, 1]> codec bf16 : tensor<?x16xi32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xi32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{result element type 'i32' differs from the input's 'f32'}}
  %a = ember.sequence_all_to_all %x, %k key_splits [0, 1] group<ranks = [0, 1]> : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64> -> !ember.awaitable<tensor<?x16xi32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xi32>) {
  // expected-error @+1 {{reduction mean needs a floating-point payload, got element type 'i32'}}
  %a = ember.reduce_scatter mean %x group<ranks = [0, 1]> : tensor<8x4xi32> -> !ember.awaitable<tensor<4x4xi32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'splits' has 1 entries but the group has 2 ranks}}
  %a = ember.reduce_scatter sum %x splits [8] group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<tensor<4x4xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{input has 8 rows but splits sums to 7}}
  %a = ember.reduce_scatter sum %x splits [3, 4] group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<tensor<4x4xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result has 4 rows but no rank of the group receives 4 (splits = [3, 5])}}
  %a = ember.reduce_scatter sum %x splits [3, 5] group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<tensor<4x4xf32>>
  return
}

// -----

func.func @f(%x: tensor<9x4xf32>) {
  // expected-error @+1 {{input has 9 rows, which do not split evenly over 2 ranks}}
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]> : tensor<9x4xf32> -> !ember.awaitable<tensor<4x4xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result has 2 rows but an even split of 8 rows over 2 ranks gives 4}}
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<tensor<2x4xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result dim 1 is 8 but the input's is 4}}
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{input must have a row dimension (rank >= 1), got 'tensor<f32>'}}
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]> : tensor<f32> -> !ember.awaitable<tensor<f32>>
  return
}

// -----

func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{result must be an awaitable of a ranked tensor, got '!ember.awaitable<i32>'}}
  %a = ember.reduce_scatter sum %x group<ranks = [0, 1]> : tensor<8x4xf32> -> !ember.awaitable<i32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{result has 6 rows but gathering 2 rows from each of 4 ranks gives 8}}
  %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]> : tensor<2x16xf32> -> !ember.awaitable<tensor<6x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{result has 6 rows, which is not a multiple of the group size 4}}
  %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]> : tensor<?x16xf32> -> !ember.awaitable<tensor<6x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<2x16xi8>) {
  // expected-error @+1 {{codec fp8 needs a floating-point payload, got element type 'i8'}}
  %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]> codec fp8 : tensor<2x16xi8> -> !ember.awaitable<tensor<8x16xi8>>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{result element type 'bf16' differs from the input's 'f32'}}
  %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]> : tensor<2x16xf32> -> !ember.awaitable<tensor<8x16xbf16>>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be an awaitable of the input type 'tensor<4x8xf32>', got '!ember.awaitable<tensor<4x9xf32>>'}}
  %a = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x9xf32>>
  return
}

// -----

func.func @f(%x: tensor<4x8xi64>) {
  // expected-error @+1 {{reduction mean needs a floating-point payload, got element type 'i64'}}
  %a = ember.all_reduce mean %x group<ranks = [0, 1]> : tensor<4x8xi64> -> !ember.awaitable<tensor<4x8xi64>>
  return
}

// -----

func.func @f(%x: tensor<4x8xi64>) {
  // expected-error @+1 {{codec fp16 needs a floating-point payload, got element type 'i64'}}
  %a = ember.all_reduce sum %x group<ranks = [0, 1]> codec fp16 : tensor<4x8xi64> -> !ember.awaitable<tensor<4x8xi64>>
  return
}
// -----

func.func @f(%a: !ember.awaitable<tensor<4xf32>>) {
  // expected-error @+1 {{'ember.wait' op failed to verify that result is the awaitable's value type}}
  %0 = "ember.wait"(%a) : (!ember.awaitable<tensor<4xf32>>) -> tensor<4xf16>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ember.wait' op operand #0 must be}}
  %0 = "ember.wait"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ember.ready' op failed to verify that result is an awaitable of the value}}
  %0 = "ember.ready"(%x) : (tensor<4xf32>) -> !ember.awaitable<tensor<4xf16>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ember.all_reduce' op result #0 must be}}
  %0 = "ember.all_reduce"(%x) <{group = #ember.group<ranks = [0, 1]>}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'ember.all_reduce' op requires attribute 'group'}}
  %0 = "ember.all_reduce"(%x) : (tensor<4xf32>) -> !ember.awaitable<tensor<4xf32>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+2 {{custom op 'ember.all_reduce' expected valid keyword}}
  // expected-error @+1 {{failed to parse Ember_ReduceKindAttr parameter 'value' which is to be a `::mlir::ember::ReduceKind`}}
  %0 = ember.all_reduce %x group<ranks = [0, 1]> : tensor<4xf32> -> !ember.awaitable<tensor<4xf32>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::ember::CommCodec to be one of: none, fp16, bf16, fp8}}
  // expected-error @+1 {{failed to parse Ember_CommCodecAttr parameter 'value' which is to be a `::mlir::ember::CommCodec`}}
  %0 = ember.all_reduce sum %x group<ranks = [0, 1]> codec fp4 : tensor<4xf32> -> !ember.awaitable<tensor<4xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{expected 'dim_per_rank'}}
  %0 = ember.pooled_all_to_all %x group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x16xf32>>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{rank 1 appears twice in the group}}
  %0 = ember.all_reduce sum %x group<ranks = [1, 1]> : tensor<4xf32> -> !ember.awaitable<tensor<4xf32>>
  return
}

// -----

func.func @f(%x: tensor<4611686018427387904x2xf32>) {
  // expected-error @+1 {{result has 8 rows but gathering 4611686018427387904 rows from each of 4 ranks gives more than 9223372036854775807}}
  %0 = ember.all_gather %x group<ranks = [0, 1, 2, 3]> : tensor<4611686018427387904x2xf32> -> !ember.awaitable<tensor<8x2xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{takes batch_size_per_rank or batch_of, not both}}
  %a = ember.pooled_all_to_all %x batch_of(%k : !ember.kjt<["a"], values = i64, lengths = i64>) dim_per_rank [16, 16] batch_size_per_rank [4, 4] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<4x32xf32>>
  return
}

// -----

func.func @f(%x: tensor<8x16xf32>, %k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{takes splits or batch_of, not both}}
  %a = ember.reduce_scatter sum %x batch_of(%k : !ember.kjt<["a"], values = i64, lengths = i64>) splits [3, 5] group<ranks = [0, 1]> : tensor<8x16xf32> -> !ember.awaitable<tensor<5x16xf32>>
  return
}
