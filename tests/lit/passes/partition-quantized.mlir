// RUN: ember-opt %s -split-input-file -ember-partition -verify-diagnostics | FileCheck %s

// Row-wise quantized tables (!ember.table<R x D, int8_rowwise>: rows of D
// codes, then f32 scale and bias, D + 8 bytes) partition like float tables.
// Row-wise: each rank gets its block of whole rows of bytes.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]]> : tensor<2x12xi8>
// CHECK: ember.table.from_tensor %[[W]] : tensor<2x12xi8> -> !ember.table<2x4, int8_rowwise>
// CHECK: ember.grouped_lookup {{.*}} pooling = sum {{.*}} !ember.table<2x4, int8_rowwise>
// CHECK: ember.reduce_scatter sum
// CHECK-LABEL: func.func @main_rank1
// CHECK: %[[W1:.*]] = arith.constant dense<{{\[}}[20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41]]> : tensor<2x12xi8>
// CHECK: ember.table.from_tensor %[[W1]] : tensor<2x12xi8> -> !ember.table<2x4, int8_rowwise>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
    %w = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41]]> : tensor<4x12xi8>
    %t = ember.table.from_tensor %w : tensor<4x12xi8> -> !ember.table<4x4, int8_rowwise>
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum include_last_offset
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 4], rank = 0>,
            #ember.shard<offsets = [2, 0], sizes = [2, 4], rank = 1>]>}
        : !ember.table<4x4, int8_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}

// -----

// Column-wise: a column shard holds its columns' codes followed by each row's
// own scale and bias (row-wise quantization: a slice of a row dequantizes
// with that row's scale and bias). Rank 0 has columns [2, 4), rank 1 [0, 2).

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [22, 23, 24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<2x10xi8>
// CHECK: ember.table.from_tensor %[[W]] : tensor<2x10xi8> -> !ember.table<2x2, int8_rowwise>
// CHECK: ember.pooled_all_to_all {{.*}} dim_per_rank [2, 2]
// CHECK-LABEL: func.func @main_rank1
// CHECK: %[[W1:.*]] = arith.constant dense<{{\[}}[0, 1, 4, 5, 6, 7, 8, 9, 10, 11], [20, 21, 24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<2x10xi8>
// CHECK: ember.table.from_tensor %[[W1]] : tensor<2x10xi8> -> !ember.table<2x2, int8_rowwise>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
    %w = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<2x12xi8>
    %t = ember.table.from_tensor %w : tensor<2x12xi8> -> !ember.table<2x4, int8_rowwise>
    %r = ember.embedding_bag %t[%ids, %off] pooling = mean include_last_offset
        {ember.sharding = #ember.sharding<column_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 1>,
            #ember.shard<offsets = [0, 2], sizes = [2, 2], rank = 0>]>}
        : !ember.table<2x4, int8_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}

// -----

// int4_rowwise column shards: two codes a byte, so the shard of columns
// [2, 4) is code byte 1, then the row's scale and bias.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[1, 2, 3, 4, 5, 6, 7, 8, 9], [21, 22, 23, 24, 25, 26, 27, 28, 29]]> : tensor<2x9xi8>
// CHECK: ember.table.from_tensor %[[W]] : tensor<2x9xi8> -> !ember.table<2x2, int4_rowwise>
// CHECK-LABEL: func.func @main_rank1
// CHECK: %[[W1:.*]] = arith.constant dense<{{\[}}[0, 2, 3, 4, 5, 6, 7, 8, 9], [20, 22, 23, 24, 25, 26, 27, 28, 29]]> : tensor<2x9xi8>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
    %w = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]]> : tensor<2x10xi8>
    %t = ember.table.from_tensor %w : tensor<2x10xi8> -> !ember.table<2x4, int4_rowwise>
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum include_last_offset
        {ember.sharding = #ember.sharding<column_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 1>,
            #ember.shard<offsets = [0, 2], sizes = [2, 2], rank = 0>]>}
        : !ember.table<2x4, int4_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}

// -----

// An int4 column shard must start and end at an even column.
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
    %w = arith.constant dense<1> : tensor<2x10xi8>
    %t = ember.table.from_tensor %w : tensor<2x10xi8> -> !ember.table<2x4, int4_rowwise>
    // expected-error @+1 {{column shard #0 of '!ember.table<2x4, int4_rowwise>' has columns [0, 1): int4_rowwise shards must start and end at even columns (two codes a byte)}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum include_last_offset
        {ember.sharding = #ember.sharding<column_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 1], rank = 1>,
            #ember.shard<offsets = [0, 1], sizes = [2, 3], rank = 0>]>}
        : !ember.table<2x4, int4_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}

// -----

// Row-wise tables of two formats on every rank: one grouped lookup per format
// (a lookup's tables share one format), their columns concatenated into the
// one reduce-scatter, in group order: the f32 table's 2 columns, then the
// int8 table's 4.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[F:.*]] = ember.grouped_lookup {{.*}} : {{.*}} !ember.table<1x2, f32> -> !ember.keyed_tensor<["t0@0" : 2], f32>
// CHECK: %[[FV:.*]] = ember.keyed_tensor.values %[[F]]
// CHECK: %[[Q:.*]] = ember.grouped_lookup {{.*}} : {{.*}} !ember.table<1x4, int8_rowwise> -> !ember.keyed_tensor<["t1@0" : 4], f32>
// CHECK: %[[QV:.*]] = ember.keyed_tensor.values %[[Q]]
// CHECK: %[[C:.*]] = tosa.concat %[[FV]], %[[QV]] {axis = 1 : i32}
// CHECK: %[[RS:.*]] = ember.reduce_scatter sum %[[C]] {{.*}} : tensor<?x6xf32> -> !ember.awaitable<tensor<?x6xf32>>
// CHECK: %[[R:.*]] = ember.wait %[[RS]]
// CHECK-DAG: tensor.extract_slice %[[R]][0, 0] [%{{.*}}, 2] [1, 1]
// CHECK-DAG: tensor.extract_slice %[[R]][0, 2] [%{{.*}}, 4] [1, 1]
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
    %w0 = arith.constant dense<1.0> : tensor<2x2xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<2x2xf32> -> !ember.table<2x2, f32>
    %w1 = arith.constant dense<3> : tensor<2x12xi8>
    %t1 = ember.table.from_tensor %w1 : tensor<2x12xi8> -> !ember.table<2x4, int8_rowwise>
    %r0 = ember.embedding_bag %t0[%ids, %off] pooling = sum include_last_offset
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [1, 2], rank = 0>,
            #ember.shard<offsets = [1, 0], sizes = [1, 2], rank = 1>]>}
        : !ember.table<2x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    %r1 = ember.embedding_bag %t1[%ids, %off] pooling = sum include_last_offset
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [1, 4], rank = 0>,
            #ember.shard<offsets = [1, 0], sizes = [1, 4], rank = 1>]>}
        : !ember.table<2x4, int8_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r0, %r1 : tensor<?x2xf32>, tensor<?x4xf32>
  }
}
