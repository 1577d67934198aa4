// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// Round trip of #ember.group, #ember.shard and #ember.sharding of every
// sharding type. Shardings print their keys in a fixed order and leave out
// defaults (compute_kernel = "fused").

// CHECK-LABEL: func.func @groups
// CHECK-SAME: g1 = #ember.group<ranks = [0, 1, 2, 3]>
// CHECK-SAME: g2 = #ember.group<ranks = [0, 1, 2, 3, 4, 5, 6, 7], ranks_per_node = 4>
// CHECK-SAME: g3 = #ember.group<ranks = [5, 2]>
func.func @groups() attributes {
  g1 = #ember.group<ranks = [0, 1, 2, 3]>,
  g2 = #ember.group<ranks = [0, 1, 2, 3, 4, 5, 6, 7], ranks_per_node = 4>,
  g3 = #ember.group<ranks = [5, 2]>
} {
  return
}

// CHECK-LABEL: func.func @shards
// CHECK-SAME: s1 = #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>
// CHECK-SAME: s2 = #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1, device = "cuda:1">
// CHECK-SAME: s3 = #ember.shard<offsets = [0, 0], sizes = [0, 64], rank = 2, device = "cpu">
func.func @shards() attributes {
  s1 = #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>,
  s2 = #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1, device = "cuda:1">,
  s3 = #ember.shard<offsets = [0, 0], sizes = [0, 64], rank = 2, device = "cpu">
} {
  return
}

// CHECK-LABEL: func.func @shardings
// CHECK-SAME: cw = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 32], rank = 0>, #ember.shard<offsets = [0, 32], sizes = [1000, 32], rank = 2>, #ember.shard<offsets = [0, 64], sizes = [1000, 64], rank = 2>]>
// CHECK-SAME: dp = #ember.sharding<data_parallel>
// CHECK-SAME: dp2 = #ember.sharding<data_parallel, ranks = [0, 1], compute_kernel = "dense">
// CHECK-SAME: rw = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>, #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>], compute_kernel = "fused_uvm_caching">
// CHECK-SAME: tw = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 64], rank = 3>]>
// CHECK-SAME: twrw = #ember.sharding<table_row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [600, 64], rank = 4>, #ember.shard<offsets = [600, 0], sizes = [400, 64], rank = 5>], ranks_per_node = 4>
func.func @shardings() attributes {
  tw = #ember.sharding<table_wise, shards = [
      #ember.shard<offsets = [0, 0], sizes = [1000, 64], rank = 3>]>,
  // Keys in any order; the compute kernel spelled out; shards in the
  // stripped form.
  rw = #ember.sharding<row_wise, compute_kernel = "fused_uvm_caching", shards = [
      <offsets = [0, 0], sizes = [500, 64], rank = 0>,
      <offsets = [500, 0], sizes = [500, 64], rank = 1>]>,
  // A rank may hold several column shards.
  cw = #ember.sharding<column_wise, shards = [
      #ember.shard<offsets = [0, 0], sizes = [1000, 32], rank = 0>,
      #ember.shard<offsets = [0, 32], sizes = [1000, 32], rank = 2>,
      #ember.shard<offsets = [0, 64], sizes = [1000, 64], rank = 2>]>,
  twrw = #ember.sharding<table_row_wise, ranks_per_node = 4, shards = [
      #ember.shard<offsets = [0, 0], sizes = [600, 64], rank = 4>,
      #ember.shard<offsets = [600, 0], sizes = [400, 64], rank = 5>]>,
  dp = #ember.sharding<data_parallel, compute_kernel = "fused">,
  dp2 = #ember.sharding<data_parallel, ranks = [0, 1], compute_kernel = "dense">
} {
  return
}

// A sharded table: ember.table checks that the shards tile it exactly.
// CHECK-LABEL: ember.table @t_rw : !ember.table<1000x64, f32>
// CHECK-SAME: sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>, #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>]>
ember.table @t_rw : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>,
    #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>]>}
// CHECK-LABEL: ember.table @t_cw : !ember.table<1000x64, f32>
// CHECK-SAME: sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 48], rank = 0>, #ember.shard<offsets = [0, 48], sizes = [1000, 16], rank = 1>]>
ember.table @t_cw : !ember.table<1000x64, f32> {sharding = #ember.sharding<column_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [1000, 48], rank = 0>,
    #ember.shard<offsets = [0, 48], sizes = [1000, 16], rank = 1>]>}
// CHECK-LABEL: ember.table @t_dp : !ember.table<10x4, f16>
// CHECK-SAME: sharding = #ember.sharding<data_parallel>
ember.table @t_dp : !ember.table<10x4, f16> {sharding = #ember.sharding<data_parallel>}
