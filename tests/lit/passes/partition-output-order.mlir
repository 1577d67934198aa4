// RUN: ember-opt %s -split-input-file -ember-partition | FileCheck %s
// RUN: ember-opt %s -split-input-file -ember-partition -canonicalize -cse -ember-simplify-slices | FileCheck %s --check-prefix=CHECK-SIMPLE

// The output dist's column order (passes/Partition.cpp): the pooled
// all-to-all receives rank 0's tables first, and its segment_dims /
// segment_columns put the columns back in the order of the bags, so that
// the slices a model concatenates are adjacent and ember-simplify-slices
// removes them.

// Four tables placed round-robin on two ranks (rank 0: t0, t2; rank 1: t1,
// t3), concatenated in order after a dense input: the all-to-all receives
// t0, t2, t1, t3 and puts t2 at column 8, t1 at 4. After the cleanup the
// concat reads the all-to-all's result whole.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[A:.*]] = ember.pooled_all_to_all %{{.*}} dim_per_rank [8, 8] segment_dims [4, 4, 4, 4] segment_columns [0, 8, 4, 12] group<ranks = [0, 1]>
// CHECK: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %[[AW]][0, 4] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[S2:.*]] = tensor.extract_slice %[[AW]][0, 8] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[S3:.*]] = tensor.extract_slice %[[AW]][0, 12] [%{{.*}}, 4] [1, 1]
// CHECK: tosa.concat %arg8, %[[S0]], %[[S1]], %[[S2]], %[[S3]] {axis = 1 : i32}
// CHECK-LABEL: func.func @main_rank1
// CHECK: ember.pooled_all_to_all %{{.*}} dim_per_rank [8, 8] segment_dims [4, 4, 4, 4] segment_columns [0, 8, 4, 12] group<ranks = [0, 1]>

// CHECK-SIMPLE-LABEL: func.func @main_rank0
// CHECK-SIMPLE: %[[A:.*]] = ember.pooled_all_to_all
// CHECK-SIMPLE: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-SIMPLE-NOT: tensor.extract_slice
// CHECK-SIMPLE: %[[C:.*]] = tosa.concat %arg8, %[[AW]] {axis = 1 : i32} : (tensor<?x2xf32>, tensor<?x16xf32>) -> tensor<?x18xf32>
// CHECK-SIMPLE: return %[[C]]
// CHECK-SIMPLE-LABEL: func.func @main_rank1
// CHECK-SIMPLE-NOT: tensor.extract_slice
// CHECK-SIMPLE: return
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%i0: tensor<?xi64>, %o0: tensor<?xi64>, %i1: tensor<?xi64>, %o1: tensor<?xi64>,
                  %i2: tensor<?xi64>, %o2: tensor<?xi64>, %i3: tensor<?xi64>, %o3: tensor<?xi64>,
                  %dense: tensor<?x2xf32>) -> tensor<?x18xf32> {
    %w0 = arith.constant dense<0.0> : tensor<3x4xf32>
    %w1 = arith.constant dense<1.0> : tensor<3x4xf32>
    %w2 = arith.constant dense<2.0> : tensor<3x4xf32>
    %w3 = arith.constant dense<3.0> : tensor<3x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t1 = ember.table.from_tensor %w1 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t2 = ember.table.from_tensor %w2 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t3 = ember.table.from_tensor %w3 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %r0 = ember.embedding_bag %t0[%i0, %o0] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 0>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r1 = ember.embedding_bag %t1[%i1, %o1] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r2 = ember.embedding_bag %t2[%i2, %o2] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 0>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r3 = ember.embedding_bag %t3[%i3, %o3] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %c = tosa.concat %dense, %r0, %r1, %r2, %r3 {axis = 1 : i32}
        : (tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x18xf32>
    return %c : tensor<?x18xf32>
  }
}

// -----

// Three ranks: table-wise (t0 on rank 1), column-wise (t1: columns [0, 2)
// on rank 0, [2, 4) on rank 1), data-parallel (t2) and row-wise on
// ranks 1 and 2 (t3: two row blocks, partial sums added at the owner)
// mixed. Wire order: rank 0's t1:c0, rank 1's t0, t1:c1, t3@0, rank 2's
// t3@1; the bags' order: t0 [0, 4), t1 [4, 8), t3's partial sums [8, 12)
// and [12, 16). Rank 1's t1:c1 and t3@0 are adjacent in both orders: one
// segment of 6.
// After the cleanup t0 and t1 are one slice [0, 8), t2 stays a local bag
// and t3 the sum of its two partial sums.

// CHECK-LABEL: func.func @main_rank0
// CHECK: %[[A:.*]] = ember.pooled_all_to_all %{{.*}} dim_per_rank [2, 10, 4] segment_dims [2, 4, 6, 4] segment_columns [4, 0, 6, 12] group<ranks = [0, 1, 2]>
// CHECK: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-DAG: %[[T0:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[C0:.*]] = tensor.extract_slice %[[AW]][0, 4] [%{{.*}}, 2] [1, 1]
// CHECK-DAG: %[[C1:.*]] = tensor.extract_slice %[[AW]][0, 6] [%{{.*}}, 2] [1, 1]
// CHECK-DAG: %[[T1:.*]] = tosa.concat %[[C0]], %[[C1]] {axis = 1 : i32}
// CHECK-DAG: %[[P0:.*]] = tensor.extract_slice %[[AW]][0, 8] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[P1:.*]] = tensor.extract_slice %[[AW]][0, 12] [%{{.*}}, 4] [1, 1]
// CHECK-DAG: %[[T3:.*]] = tosa.add %[[P0]], %[[P1]]
// CHECK-DAG: %[[T2:.*]] = ember.embedding_bag
// CHECK: tosa.concat %[[T0]], %[[T1]], %[[T2]], %[[T3]] {axis = 1 : i32}

// CHECK-SIMPLE-LABEL: func.func @main_rank0
// CHECK-SIMPLE: %[[A:.*]] = ember.pooled_all_to_all
// CHECK-SIMPLE: %[[AW:.*]] = ember.wait %[[A]]
// CHECK-SIMPLE-DAG: %[[T01:.*]] = tensor.extract_slice %[[AW]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK-SIMPLE-DAG: %[[P0:.*]] = tensor.extract_slice %[[AW]][0, 8] [%{{.*}}, 4] [1, 1]
// CHECK-SIMPLE-DAG: %[[P1:.*]] = tensor.extract_slice %[[AW]][0, 12] [%{{.*}}, 4] [1, 1]
// CHECK-SIMPLE-DAG: %[[T3:.*]] = tosa.add %[[P0]], %[[P1]]
// CHECK-SIMPLE-DAG: %[[T2:.*]] = ember.embedding_bag
// CHECK-SIMPLE: tosa.concat %[[T01]], %[[T2]], %[[T3]] {axis = 1 : i32}
module attributes {ember.world_size = 3 : i64} {
  func.func @main(%i0: tensor<?xi64>, %o0: tensor<?xi64>, %i1: tensor<?xi64>, %o1: tensor<?xi64>,
                  %i2: tensor<?xi64>, %o2: tensor<?xi64>, %i3: tensor<?xi64>, %o3: tensor<?xi64>)
      -> tensor<?x16xf32> {
    %w0 = arith.constant dense<0.0> : tensor<3x4xf32>
    %w1 = arith.constant dense<1.0> : tensor<3x4xf32>
    %w2 = arith.constant dense<2.0> : tensor<3x4xf32>
    %w3 = arith.constant dense<3.0> : tensor<6x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t1 = ember.table.from_tensor %w1 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t2 = ember.table.from_tensor %w2 : tensor<3x4xf32> -> !ember.table<3x4, f32>
    %t3 = ember.table.from_tensor %w3 : tensor<6x4xf32> -> !ember.table<6x4, f32>
    %r0 = ember.embedding_bag %t0[%i0, %o0] pooling = sum
        {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r1 = ember.embedding_bag %t1[%i1, %o1] pooling = sum
        {ember.sharding = #ember.sharding<column_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [3, 2], rank = 0>,
            #ember.shard<offsets = [0, 2], sizes = [3, 2], rank = 1>]>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r2 = ember.embedding_bag %t2[%i2, %o2] pooling = sum
        {ember.sharding = #ember.sharding<data_parallel, shards = []>}
        : !ember.table<3x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %r3 = ember.embedding_bag %t3[%i3, %o3] pooling = sum
        {ember.sharding = #ember.sharding<row_wise, shards = [
            #ember.shard<offsets = [0, 0], sizes = [3, 4], rank = 1>,
            #ember.shard<offsets = [3, 0], sizes = [3, 4], rank = 2>]>}
        : !ember.table<6x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
    %c = tosa.concat %r0, %r1, %r2, %r3 {axis = 1 : i32}
        : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x16xf32>
    return %c : tensor<?x16xf32>
  }
}
