// RUN: ember-opt %s -split-input-file -ember-partition -verify-diagnostics | FileCheck %s

// Table-wise: t0 on rank 1, t1 on rank 0. Each rank sends every bag to the
// table's rank, looks up its own table for all ranks' bags, and the pooled
// all-to-all returns [B, 8]: it receives rank 0's table (t1) then rank 1's
// (t0), and its segments put them in the bags' order, t0 then t1.

// CHECK-LABEL: func.func @main_rank0
// CHECK-SAME: attributes {ember.rank = 0 : i64}
// The KJT is built in destination order: rank 0's key first.
// CHECK: %[[P:.*]] = ember.kjt.from_bags values(%arg2, %arg0 : tensor<?xi64>, tensor<?xi64>) offsets(%arg3, %arg1 : tensor<?xi64>, tensor<?xi64>) include_last_offset = [false, false] num_rows = [2, 3] {ember.feature_names = ["t1", "t0"]} -> !ember.kjt<["t1", "t0"], values = i64, lengths = i64>
// CHECK-NOT: ember.kjt.permute
// CHECK: %[[S:.*]] = ember.kjt_all_to_all.splits %[[P]] key_splits [1, 1] group<ranks = [0, 1]>
// CHECK: %[[SW:.*]] = ember.wait %[[S]]
// CHECK: %[[T:.*]] = ember.kjt_all_to_all.tensors %[[P]], %[[SW]] key_splits [1, 1] group<ranks = [0, 1]> : !ember.kjt<["t1", "t0"], values = i64, lengths = i64>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["t1"], values = i64, lengths = i64>>
// CHECK: %[[R:.*]] = ember.wait %[[T]]
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]{{.*}}> : tensor<2x4xf32>
// CHECK: %[[TB:.*]] = ember.table.from_tensor %[[W]] : tensor<2x4xf32> -> !ember.table<2x4, f32>
// CHECK: %[[L:.*]] = ember.grouped_lookup %[[R]] tables(%[[TB]]) feature_tables = [0] column_offsets = [0] pooling = sum
// CHECK: %[[V:.*]] = ember.keyed_tensor.values %[[L]] {{.*}} -> tensor<?x4xf32>
// CHECK: %[[A:.*]] = ember.pooled_all_to_all %[[V]] batch_of(%[[P]] : {{.*}}) dim_per_rank [4, 4] segment_dims [4, 4] segment_columns [4, 0] group<ranks = [0, 1]> : tensor<?x4xf32> -> !ember.awaitable<tensor<?x8xf32>>
// CHECK: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-DAG: %[[R0:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[R1:.*]] = tensor.extract_slice %[[AW]][0, 4] [%{{.*}}, 4] [1, 1]
// CHECK-NOT: ember.embedding_bag
// CHECK: return %[[R0]], %[[R1]]
// CHECK-LABEL: func.func @main_rank1
// CHECK-SAME: attributes {ember.rank = 1 : i64}
// CHECK: ember.kjt_all_to_all.tensors {{.*}} -> !ember.awaitable<!ember.kjt<["t0"], values = i64, lengths = i64>>
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]{{.*}}> : tensor<3x4xf32>
// CHECK: ember.pooled_all_to_all {{.*}} dim_per_rank [4, 4]
// CHECK-NOT: func.func @main(
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids0: tensor<?xi64>, %off0: tensor<?xi64>,
                  %ids1: tensor<?xi64>, %off1: tensor<?xi64>)
      -> (tensor<?x4xf32>, tensor<?x4xf32>) {
    %w0 = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]> : tensor<3x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %w1 = arith.constant dense<[[4.0, 5.0, 6.0, 7.0], [8.0, 8.0, 8.0, 8.0]]> : tensor<2x4xf32>
    %t1 = ember.table.from_tensor %w1 : tensor<2x4xf32> -> !ember.table<2x4, f32>
    %r0 = ember.embedding_bag %t0[%ids0, %off0] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r1 = ember.embedding_bag %t1[%ids1, %off1] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [2, 4], rank = 0>]>}
        : !ember.table<2x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r0, %r1 : tensor<?x4xf32>, tensor<?x4xf32>
  }
}

// -----

// Column-wise: columns [0, 2) on rank 1, [2, 4) on rank 0. The bags go to
// both ranks; the all-to-all puts rank 1's columns first, so the table's
// columns are one range of its result, which ember-simplify-slices turns
// into one slice.

// CHECK-LABEL: func.func @main_rank0
// CHECK: ember.kjt.from_bags values(%arg0, %arg0 : {{.*}}) offsets(%arg1, %arg1 : {{.*}}) include_last_offset = [true, true] num_rows = [2, 2] {ember.feature_names = ["t0", "t0"]} -> !ember.kjt<["t0:c1", "t0:c0"]
// CHECK: ember.kjt_all_to_all.tensors {{.*}} -> !ember.awaitable<!ember.kjt<["t0:c1"], values = i64, lengths = i64>>
// CHECK: arith.constant dense<{{\[}}[2.000000e+00, 3.000000e+00], [1.200000e+01, 1.300000e+01]]> : tensor<2x2xf32>
// CHECK: ember.grouped_lookup {{.*}} pooling = mean
// CHECK: %[[A:.*]] = ember.pooled_all_to_all {{.*}} dim_per_rank [2, 2] segment_dims [2, 2] segment_columns [2, 0] group
// CHECK: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-DAG: %[[HI:.*]] = tensor.extract_slice %[[AW]][0, 2] [%{{.*}}, 2] [1, 1]
// CHECK-DAG: %[[LO:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 2] [1, 1]
// CHECK: tosa.concat %[[LO]], %[[HI]] {axis = 1 : i32}
// CHECK-LABEL: func.func @main_rank1
// CHECK: arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00], [1.000000e+01, 1.100000e+01]]> : tensor<2x2xf32>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x4xf32> {
    %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [10.0, 11.0, 12.0, 13.0]]> : tensor<2x4xf32>
    %t = ember.table.from_tensor %w : tensor<2x4xf32> -> !ember.table<2x4, f32>
    %r = ember.embedding_bag %t[%ids, %off] pooling = mean include_last_offset
        {ember.sharding = #ember.sharding<column_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 1>,
            #ember.shard<offsets = [0, 2], sizes = [2, 2], rank = 0>]>}
        : !ember.table<2x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
}

// -----

// Row-wise over every rank: bucketized ids, one shard of rows per rank, and a
// reduce-scatter of the partial sums. Weighted bags travel in their own KJT.

// CHECK-LABEL: func.func @main_rank1
// CHECK: %[[K:.*]] = ember.kjt.from_bags values(%arg0 : tensor<?xi64>) offsets(%arg1 : tensor<?xi64>) weights(%arg2 : tensor<?xf32>) include_last_offset = [false] num_rows = [5] {ember.feature_names = ["t0"]} -> !ember.kjt<["t0"], values = i64, lengths = i64, weighted>
// CHECK: %[[B:.*]], %{{.*}} = ember.kjt.bucketize %[[K]] block_sizes = [3] num_buckets = 2
// CHECK: ember.kjt_all_to_all.splits %[[B]] key_splits [1, 1]
// CHECK: ember.kjt_all_to_all.tensors {{.*}} -> !ember.awaitable<!ember.kjt<["t0@1"], values = i64, lengths = i64, weighted>>
// CHECK: arith.constant dense<{{\[}}[3.000000e+00, 3.000000e+00], [4.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: ember.grouped_lookup {{.*}} pooling = sum
// CHECK: %[[RS:.*]] = ember.reduce_scatter sum %{{.*}} batch_of(%[[B]] : {{.*}}) group<ranks = [0, 1]> : tensor<?x2xf32> -> !ember.awaitable<tensor<?x2xf32>>
// CHECK: %[[V:.*]] = ember.wait %[[RS]]
// CHECK: return %[[V]]
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>, %psw: tensor<?xf32>) -> tensor<?x2xf32> {
    %w = arith.constant dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]> : tensor<5x2xf32>
    %t = ember.table.from_tensor %w : tensor<5x2xf32> -> !ember.table<5x2, f32>
    %r = ember.embedding_bag %t[%ids, %off] weights(%psw) pooling = sum
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 0>,
            #ember.shard<offsets = [3, 0], sizes = [2, 2], rank = 1>]>}
        : !ember.table<5x2, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

// Table-row-wise on ranks 2 and 3 of 4: partial sums come back through the
// pooled all-to-all and are added. A data-parallel table stays a local bag.

// CHECK-LABEL: func.func @main_rank0
// CHECK: ember.kjt.bucketize %{{.*}} block_sizes = [2] num_buckets = 2
// CHECK: ember.kjt_all_to_all.splits %{{.*}} key_splits [0, 0, 1, 1] group<ranks = [0, 1, 2, 3]>
// CHECK: ember.kjt_all_to_all.tensors {{.*}} -> !ember.awaitable<!ember.kjt<[], values = i64, lengths = i64>>
// CHECK: %[[E:.*]] = arith.constant dense<> : tensor<0x0xf32>
// CHECK: %[[A:.*]] = ember.pooled_all_to_all %[[E]] batch_of({{.*}}) dim_per_rank [0, 0, 2, 2] group<ranks = [0, 1, 2, 3]> : tensor<0x0xf32> -> !ember.awaitable<tensor<?x4xf32>>
// CHECK: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-DAG: %[[P0:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 2] [1, 1]
// CHECK-DAG: %[[P1:.*]] = tensor.extract_slice %[[AW]][0, 2] [%{{.*}}, 2] [1, 1]
// CHECK: %[[SUM:.*]] = tosa.add %[[P0]], %[[P1]]
// CHECK: %[[DP:.*]] = ember.embedding_bag %{{.*}}[%arg2, %arg3] pooling = max : !ember.table<3x2, f32>
// CHECK-NOT: ember.sharding
// CHECK: return %[[SUM]], %[[DP]]
// CHECK-LABEL: func.func @main_rank3
// CHECK: ember.kjt_all_to_all.tensors {{.*}} -> !ember.awaitable<!ember.kjt<["t0@1"], values = i64, lengths = i64>>
// CHECK: arith.constant dense<2.000000e+00> : tensor<1x2xf32>
module attributes {ember.world_size = 4 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>, %ids1: tensor<?xi64>, %off1: tensor<?xi64>)
      -> (tensor<?x2xf32>, tensor<?x2xf32>) {
    %w = arith.constant dense<[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]> : tensor<3x2xf32>
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        {ember.sharding = #ember.sharding<table_row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 2>,
            #ember.shard<offsets = [2, 0], sizes = [1, 2], rank = 3>], ranks_per_node = 2>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    %r1 = ember.embedding_bag %t[%ids1, %off1] pooling = max
        {ember.sharding = #ember.sharding<data_parallel>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r, %r1 : tensor<?x2xf32>, tensor<?x2xf32>
  }
}

// -----

// Row-wise mean: the shards add partial sums; the owner divides by the bag
// size, at least 1 (an empty bag stays 0).

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[ONE:.*]] = ember.kjt.from_bags values(%arg0 : tensor<?xi64>) offsets(%arg1 : tensor<?xi64>) include_last_offset = [false] num_rows = [4] {ember.feature_names = ["t0"]} -> !ember.kjt<["t0"], values = i64, lengths = i64>
// CHECK: ember.kjt.bucketize %[[ONE]]
// CHECK: ember.grouped_lookup {{.*}} pooling = sum
// CHECK: %[[RS:.*]] = ember.reduce_scatter sum
// CHECK: %[[SUM:.*]] = ember.wait %[[RS]]
// CHECK: %[[LEN:.*]] = ember.kjt.lengths %[[ONE]]
// CHECK: %[[LF:.*]] = arith.sitofp %[[LEN]] : tensor<?xi64> to tensor<?xf32>
// CHECK: %[[CNT:.*]] = tosa.maximum %[[LF]], %{{.*}} : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
// CHECK: %[[COL:.*]] = tensor.expand_shape %[[CNT]] {{\[}}[0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[COL]]
// CHECK: %[[MEAN:.*]] = tosa.mul %[[SUM]], %[[INV]], %{{.*}} : (tensor<?x2xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x2xf32>
// CHECK: return %[[MEAN]]
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %t = ember.table.from_tensor %w : tensor<4x2xf32> -> !ember.table<4x2, f32>
    %r = ember.embedding_bag %t[%ids, %off] pooling = mean
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 0>,
            #ember.shard<offsets = [2, 0], sizes = [2, 2], rank = 1>]>}
        : !ember.table<4x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

// expected-error @+1 {{the module has no 'ember.world_size' attribute: run --ember-plan-sharding first}}
module {
  func.func @main() {
    return
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<3x2xf32>
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    // expected-error @+1 {{embedding bag has no 'ember.sharding' attribute: run --ember-plan-sharding first}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<3x2xf32>
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    // expected-error @+1 {{sharding places a shard on rank 2 but the world size is 2}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 2>]>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %t = ember.table.from_tensor %w : tensor<4x2xf32> -> !ember.table<4x2, f32>
    // expected-error @+1 {{row-wise sharding supports sum and mean pooling (partial sums are added over ranks); this bag pools with max: use table_wise or column_wise}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = max
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 0>,
            #ember.shard<offsets = [2, 0], sizes = [2, 2], rank = 1>]>}
        : !ember.table<4x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<5x2xf32>
    %t = ember.table.from_tensor %w : tensor<5x2xf32> -> !ember.table<5x2, f32>
    // expected-error @+1 {{row-wise shards must be equal blocks of 2 rows (the last one shorter): shard 1 has rows [2, 5) but the block is [2, 4)}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [2, 2], rank = 0>,
            #ember.shard<offsets = [2, 0], sizes = [3, 2], rank = 1>]>}
        : !ember.table<5x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<3x2xf32>
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    // expected-error @+1 {{a sharded embedding bag cannot have padding_idx}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum padding_idx = 0
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 1>]>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>, %w: tensor<3x2xf32>) -> tensor<?x2xf32> {
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    // expected-error @+1 {{a sharded table must be a constant weight tensor}}
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 1>]>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

// One rank: the attributes go, the bags stay.
// CHECK-LABEL: func.func @main(
// CHECK: ember.embedding_bag
// CHECK-NOT: ember.sharding
// CHECK-NOT: kjt_all_to_all
module attributes {ember.world_size = 1 : i64} {
  func.func @main(%ids: tensor<?xi64>, %off: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<3x2xf32>
    %t = ember.table.from_tensor %w : tensor<3x2xf32> -> !ember.table<3x2, f32>
    %r = ember.embedding_bag %t[%ids, %off] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 0>]>}
        : !ember.table<3x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    return %r : tensor<?x2xf32>
  }
}

// -----

// An embedding_bag_collection (a KJT input, as TorchRec models take their
// features) whose tables are sharded becomes one embedding_bag per feature
// over the KJT's one-key parts, each with its table's sharding (t0 is read
// by "a" and "c"); the bags are then partitioned like any others and the
// keyed tensor is rebuilt from their columns in key order.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[S:.*]]:3 = ember.kjt.split %arg0 [1, 1, 1]
// CHECK: ember.kjt.from_bags values({{.*}}) offsets({{.*}}) include_last_offset = [true, true, true] num_rows = [5, 3, 3] {ember.feature_names = ["b", "a", "c"]}
// CHECK: ember.kjt_all_to_all.tensors
// CHECK: ember.grouped_lookup
// CHECK: ember.pooled_all_to_all {{.*}} dim_per_rank [2, 8]
// CHECK: ember.keyed_tensor.create {{.*}} -> !ember.keyed_tensor<["a" : 4, "b" : 2, "c" : 4], f32>
// CHECK-NOT: ember.embedding_bag_collection
// CHECK: return
// CHECK-LABEL: func.func @main_rank1
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>)
      -> !ember.keyed_tensor<["a" : 4, "b" : 2, "c" : 4], f32> {
    %w0 = arith.constant dense<1.0> : tensor<3x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %w1 = arith.constant dense<2.0> : tensor<5x2xf32>
    %t1 = ember.table.from_tensor %w1 : tensor<5x2xf32> -> !ember.table<5x2, f32>
    %kt = ember.embedding_bag_collection %k tables(%t0, %t1)
        feature_tables = [0, 1, 0] pooling = [sum, mean]
        {ember.sharding = [#ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>]>,
                           #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 2], rank = 0>]>]}
        : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
          !ember.table<3x4, f32>, !ember.table<5x2, f32>
        -> !ember.keyed_tensor<["a" : 4, "b" : 2, "c" : 4], f32>
    return %kt : !ember.keyed_tensor<["a" : 4, "b" : 2, "c" : 4], f32>
  }
}

// -----

// A collection whose tables are all data parallel stays whole (one grouped
// lookup on every rank).

// CHECK-LABEL: func.func @main_rank0
// CHECK: ember.embedding_bag_collection
// CHECK-NOT: ember.sharding
// CHECK-NOT: ember.kjt_all_to_all
// CHECK: return
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%k: !ember.kjt<["a"], values = i64, lengths = i32>)
      -> !ember.keyed_tensor<["a" : 4], f32> {
    %w0 = arith.constant dense<1.0> : tensor<3x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %kt = ember.embedding_bag_collection %k tables(%t0)
        feature_tables = [0] pooling = [sum]
        {ember.sharding = [#ember.sharding<data_parallel>]}
        : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<3x4, f32>
        -> !ember.keyed_tensor<["a" : 4], f32>
    return %kt : !ember.keyed_tensor<["a" : 4], f32>
  }
}
