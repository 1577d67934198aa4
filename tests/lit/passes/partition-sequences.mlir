// RUN: ember-opt %s -split-input-file -ember-partition -verify-diagnostics | FileCheck %s

// Table-wise on rank 1: every rank sends its ids (a one-key KJT) to rank 1,
// which looks them up in the whole table; sequence_all_to_all brings every
// id's row back to its sender. Rank 0 looks nothing up (no rows).
// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[V:.*]] = ember.jagged.values %arg0
// CHECK: %[[O:.*]] = ember.jagged.offsets %arg0
// CHECK: %[[K:.*]] = ember.kjt.create values(%[[V]] : tensor<?xi64>) offsets(%[[O]] : tensor<?xi64>) -> !ember.kjt<["seq0"], values = i64, lengths = i64>
// CHECK: ember.kjt_all_to_all.splits %[[K]] key_splits [0, 1]
// CHECK: ember.kjt_all_to_all.tensors %[[K]], {{.*}} -> !ember.awaitable<!ember.kjt<[], values = i64, lengths = i64>>
// CHECK-NOT: ember.sequence_lookup
// CHECK: %[[E:.*]] = arith.constant dense<> : tensor<0x4xf32>
// CHECK: %[[A:.*]] = ember.sequence_all_to_all %[[E]], %[[K]] key_splits [0, 1] group<ranks = [0, 1]> : tensor<0x4xf32>, {{.*}} -> !ember.awaitable<tensor<?x4xf32>>
// CHECK: %[[R:.*]] = ember.wait %[[A]]
// CHECK: %[[J:.*]] = ember.jagged.create %[[R]], %[[O]] : tensor<?x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
// CHECK: return %[[J]]
// CHECK-LABEL: func.func @main_rank1
// CHECK: %[[RK:.*]] = ember.wait {{.*}} : !ember.awaitable<!ember.kjt<["seq0"], values = i64, lengths = i64>>
// CHECK: %[[RV:.*]] = ember.kjt.values %[[RK]]
// CHECK: %[[RO:.*]] = ember.kjt.offsets %[[RK]]
// CHECK: %[[RJ:.*]] = ember.jagged.create %[[RV]], %[[RO]]
// CHECK: %[[L:.*]] = ember.sequence_lookup {{.*}}[%[[RJ]]] : !ember.table<6x4, f32>
// CHECK: %[[LV:.*]] = ember.jagged.values %[[L]]
// CHECK: ember.sequence_all_to_all %[[LV]], {{.*}} key_splits [0, 1]
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [4]> {
    %w = arith.constant dense<1.0> : tensor<6x4xf32>
    %t = ember.table.from_tensor %w : tensor<6x4xf32> -> !ember.table<6x4, f32>
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [6, 4], rank = 1>]>}
        : !ember.table<6x4, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [4]>
    return %r : !ember.jagged<f32, [4]>
  }
}

// -----

// Row-wise over 2 ranks (blocks of 3 rows): the ids are bucketized, bucket r
// goes to rank r, which looks them up in its rows; the rows come back bucket
// by bucket and the unbucketize permutation puts them in input order.
// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[B:.*]], %[[P:.*]] = ember.kjt.bucketize {{.*}} block_sizes = [3] num_buckets = 2
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00]{{.*}}> : tensor<3x2xf32>
// CHECK: ember.kjt_all_to_all.tensors %[[B]], {{.*}} key_splits [1, 1]
// CHECK: ember.sequence_lookup {{.*}} : !ember.table<3x2, f32>
// CHECK: %[[A:.*]] = ember.sequence_all_to_all {{.*}}, %[[B]] key_splits [1, 1]
// CHECK: %[[R:.*]] = ember.wait %[[A]]
// CHECK: %[[R3:.*]] = tosa.reshape %[[R]]
// CHECK: %[[P32:.*]] = arith.trunci %[[P]] : tensor<?xi64> to tensor<?xi32>
// CHECK: %[[I:.*]] = tosa.reshape %[[P32]]
// CHECK: %[[G:.*]] = tosa.gather %[[R3]], %[[I]] : (tensor<1x?x2xf32>, tensor<1x?xi32>) -> tensor<1x?x2xf32>
// CHECK: %[[G2:.*]] = tosa.reshape %[[G]]
// CHECK: ember.jagged.create %[[G2]]
// CHECK-LABEL: func.func @main_rank1
// CHECK: arith.constant dense<{{\[}}[6.000000e+00, 7.000000e+00]{{.*}}> : tensor<3x2xf32>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [2]> {
    %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]> : tensor<6x2xf32>
    %t = ember.table.from_tensor %w : tensor<6x2xf32> -> !ember.table<6x2, f32>
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 0>, #ember.shard<offsets = [3, 0], sizes = [3, 2], rank = 1>]>}
        : !ember.table<6x2, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [2]>
    return %r : !ember.jagged<f32, [2]>
  }
}

// -----

// Column-wise: each column block goes its own way (a KJT and an all-to-all
// per block); the blocks' rows are concatenated by columns.
// CHECK-LABEL: func.func @main_rank0
// CHECK: ember.kjt.create {{.*}} -> !ember.kjt<["seq0"], values = i64, lengths = i64>
// CHECK: ember.sequence_all_to_all {{.*}} key_splits [1, 0]
// CHECK: ember.kjt.create {{.*}} -> !ember.kjt<["seq0"], values = i64, lengths = i64>
// CHECK: ember.sequence_all_to_all {{.*}} key_splits [0, 1]
// CHECK: tosa.concat {{.*}} {axis = 1 : i32} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [8]> {
    %w = arith.constant dense<1.0> : tensor<5x8xf32>
    %t = ember.table.from_tensor %w : tensor<5x8xf32> -> !ember.table<5x8, f32>
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 0>, #ember.shard<offsets = [0, 4], sizes = [5, 4], rank = 1>]>}
        : !ember.table<5x8, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [8]>
    return %r : !ember.jagged<f32, [8]>
  }
}

// -----

// Data parallel: the lookup stays, without its attribute.
// CHECK-LABEL: func.func @main_rank0
// CHECK: ember.sequence_lookup
// CHECK-NOT: ember.sharding
// CHECK-NOT: ember.sequence_all_to_all
// CHECK-LABEL: func.func @main_rank1
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [8]> {
    %w = arith.constant dense<1.0> : tensor<5x8xf32>
    %t = ember.table.from_tensor %w : tensor<5x8xf32> -> !ember.table<5x8, f32>
    %r = ember.sequence_lookup %t[%ids] {ember.sharding = #ember.sharding<data_parallel>}
        : !ember.table<5x8, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [8]>
    return %r : !ember.jagged<f32, [8]>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [2]> {
    %w = arith.constant dense<1.0> : tensor<6x2xf32>
    %t = ember.table.from_tensor %w : tensor<6x2xf32> -> !ember.table<6x2, f32>
    // expected-error @+1 {{its row shards must be on ascending ranks (shard 1 is on rank 0)}}
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 1>, #ember.shard<offsets = [3, 0], sizes = [3, 2], rank = 0>]>}
        : !ember.table<6x2, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [2]>
    return %r : !ember.jagged<f32, [2]>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [2]> {
    %w = arith.constant dense<1.0> : tensor<6x2xf32>
    %t = ember.table.from_tensor %w : tensor<6x2xf32> -> !ember.table<6x2, f32>
    // expected-error @+1 {{the shards of columns [0, 2) cover 5 of 6 rows}}
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 0>, #ember.shard<offsets = [3, 0], sizes = [2, 2], rank = 1>]>}
        : !ember.table<6x2, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [2]>
    return %r : !ember.jagged<f32, [2]>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [2]> {
    %w = arith.constant dense<1.0> : tensor<6x2xf32>
    %t = ember.table.from_tensor %w : tensor<6x2xf32> -> !ember.table<6x2, f32>
    // expected-error @+1 {{a shard is on rank 2 but the world has 2 ranks}}
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [6, 2], rank = 2>]>}
        : !ember.table<6x2, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [2]>
    return %r : !ember.jagged<f32, [2]>
  }
}

// -----

module attributes {ember.world_size = 2 : i64} {
  func.func @main(%ids: !ember.jagged<i64>) -> !ember.jagged<f32, [4]> {
    %w = arith.constant dense<1.0> : tensor<6x4xf32>
    %t = ember.table.from_tensor %w : tensor<6x4xf32> -> !ember.table<6x4, f32>
    // expected-error @+1 {{the shards cover 2 of 4 columns}}
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [6, 2], rank = 0>]>}
        : !ember.table<6x4, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [4]>
    return %r : !ember.jagged<f32, [4]>
  }
}

// -----

// Ids read from a one-key KJT (what ember-split-embedding-collections makes)
// travel in that KJT: no second KJT is built from them.
// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[P:.*]] = ember.kjt.split %arg0 [1]
// CHECK-NOT: ember.kjt.create
// CHECK: ember.kjt_all_to_all.splits %[[P]] key_splits [0, 1]
// CHECK: %[[A:.*]] = ember.sequence_all_to_all {{.*}}, %[[P]] key_splits [0, 1] group<ranks = [0, 1]> : tensor<0x4xf32>, !ember.kjt<["f"], values = i64, lengths = i32>
// CHECK-LABEL: func.func @main_rank1
// CHECK: ember.wait {{.*}} : !ember.awaitable<!ember.kjt<["f"], values = i64, lengths = i32>>
// CHECK: ember.kjt.offsets {{.*}} : !ember.kjt<["f"], values = i64, lengths = i32> -> tensor<?xi64>
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%k: !ember.kjt<["f"], values = i64, lengths = i32>) -> !ember.jagged<f32, [4]> {
    %w = arith.constant dense<1.0> : tensor<6x4xf32>
    %t = ember.table.from_tensor %w : tensor<6x4xf32> -> !ember.table<6x4, f32>
    %p = ember.kjt.split %k [1] : !ember.kjt<["f"], values = i64, lengths = i32> -> !ember.kjt<["f"], values = i64, lengths = i32>
    %v = ember.kjt.values %p : !ember.kjt<["f"], values = i64, lengths = i32> -> tensor<?xi64>
    %o = ember.kjt.offsets %p : !ember.kjt<["f"], values = i64, lengths = i32> -> tensor<?xi64>
    %ids = ember.jagged.create %v, %o : tensor<?xi64>, tensor<?xi64> -> !ember.jagged<i64>
    %r = ember.sequence_lookup %t[%ids]
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [6, 4], rank = 1>]>}
        : !ember.table<6x4, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [4]>
    return %r : !ember.jagged<f32, [4]>
  }
}
