// RUN: ember-opt --ember-group-tables --split-input-file %s | FileCheck %s

// All tables f32 with sum pooling: one grouped lookup with the collection's
// own result type; the column offsets are where the keyed tensor puts each
// key. A table used by two features appears once.
// CHECK-LABEL: func.func @one_group
// CHECK-SAME: (%[[KJT:.*]]: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %[[T0:.*]]: !ember.table<100x16, f32>, %[[T1:.*]]: !ember.table<200x32, f32>)
// CHECK-NEXT: %[[G:.*]] = ember.grouped_lookup %[[KJT]] tables(%[[T0]], %[[T1]]) feature_tables = [0, 1, 0] column_offsets = [0, 16, 48] pooling = sum
// CHECK-SAME: -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 16], f32>
// CHECK-NEXT: return %[[G]]
// CHECK-NOT: embedding_bag_collection
func.func @one_group(%kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
                     %t0: !ember.table<100x16, f32>, %t1: !ember.table<200x32, f32>)
    -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 16], f32> {
  %kt = ember.embedding_bag_collection %kjt tables(%t0, %t1)
      feature_tables = [0, 1, 0] pooling = [sum, sum]
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
        !ember.table<100x16, f32>, !ember.table<200x32, f32>
      -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 16], f32>
  return %kt : !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 16], f32>
}

// -----

// Two formats: the f32 features (a, c) and the int8 feature (b) each get a
// grouped lookup over their keys; a regroup restores the collection's key
// order and columns.
// CHECK-LABEL: func.func @two_formats
// CHECK-SAME: (%[[KJT:.*]]: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %[[T0:.*]]: !ember.table<100x16, f32>, %[[T1:.*]]: !ember.table<200x32, int8_rowwise>, %[[T2:.*]]: !ember.table<300x8, f32>)
// CHECK-NEXT: %[[K0:.*]] = ember.kjt.permute %[[KJT]] [0, 2] {{.*}} -> !ember.kjt<["a", "c"], values = i64, lengths = i32>
// CHECK-NEXT: %[[G0:.*]] = ember.grouped_lookup %[[K0]] tables(%[[T0]], %[[T2]]) feature_tables = [0, 1] column_offsets = [0, 16] pooling = sum
// CHECK-SAME: -> !ember.keyed_tensor<["a" : 16, "c" : 8], f32>
// CHECK-NEXT: %[[K1:.*]] = ember.kjt.permute %[[KJT]] [1] {{.*}} -> !ember.kjt<["b"], values = i64, lengths = i32>
// CHECK-NEXT: %[[G1:.*]] = ember.grouped_lookup %[[K1]] tables(%[[T1]]) feature_tables = [0] column_offsets = [0] pooling = sum
// CHECK-SAME: -> !ember.keyed_tensor<["b" : 32], f32>
// CHECK-NEXT: %[[R:.*]] = ember.keyed_tensor.regroup %[[G0]], %[[G1]] {{.*}} -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 8], f32>
// CHECK-NEXT: return %[[R]]
func.func @two_formats(%kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
                       %t0: !ember.table<100x16, f32>, %t1: !ember.table<200x32, int8_rowwise>,
                       %t2: !ember.table<300x8, f32>)
    -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 8], f32> {
  %kt = ember.embedding_bag_collection %kjt tables(%t0, %t1, %t2)
      feature_tables = [0, 1, 2] pooling = [sum, sum, sum]
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
        !ember.table<100x16, f32>, !ember.table<200x32, int8_rowwise>, !ember.table<300x8, f32>
      -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 8], f32>
  return %kt : !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 8], f32>
}

// -----

// Same format, different pooling: two groups, in the order of their first
// feature; each takes only the tables its features use.
// CHECK-LABEL: func.func @two_poolings
// CHECK-SAME: %[[T0:[^:]*]]: !ember.table<100x16, f32>, %[[T1:[^:]*]]: !ember.table<200x16, f32>
// CHECK: ember.kjt.permute %{{.*}} [0] {{.*}} -> !ember.kjt<["b"], values = i64, lengths = i32>
// CHECK-NEXT: %[[GB:.*]] = ember.grouped_lookup %{{.*}} tables(%[[T1]]) feature_tables = [0] column_offsets = [0] pooling = mean
// CHECK: ember.kjt.permute %{{.*}} [1] {{.*}} -> !ember.kjt<["a"], values = i64, lengths = i32>
// CHECK-NEXT: %[[GA:.*]] = ember.grouped_lookup %{{.*}} tables(%[[T0]]) feature_tables = [0] column_offsets = [0] pooling = sum
// CHECK: ember.keyed_tensor.regroup %[[GB]], %[[GA]]
// CHECK-SAME: -> !ember.keyed_tensor<["b" : 16, "a" : 16], f32>
func.func @two_poolings(%kjt: !ember.kjt<["b", "a"], values = i64, lengths = i32>,
                        %t0: !ember.table<100x16, f32>, %t1: !ember.table<200x16, f32>)
    -> !ember.keyed_tensor<["b" : 16, "a" : 16], f32> {
  %kt = ember.embedding_bag_collection %kjt tables(%t0, %t1)
      feature_tables = [1, 0] pooling = [sum, mean]
      : !ember.kjt<["b", "a"], values = i64, lengths = i32>,
        !ember.table<100x16, f32>, !ember.table<200x16, f32>
      -> !ember.keyed_tensor<["b" : 16, "a" : 16], f32>
  return %kt : !ember.keyed_tensor<["b" : 16, "a" : 16], f32>
}

// -----

// Tables are batched only with tables of the same sharding type and compute
// kernel (the default kernel is "fused"); unsharded tables only with
// unsharded ones.
ember.table @ta : !ember.table<100x8, f32>
    {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [100, 8], rank = 0>], compute_kernel = "fused_uvm_caching">}
ember.table @tb : !ember.table<100x8, f32>
    {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [100, 8], rank = 1>]>}
ember.table @tc : !ember.table<100x8, f32>
    {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [100, 8], rank = 1>], compute_kernel = "fused">}
ember.table @td : !ember.table<100x8, f32>
    {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [50, 8], rank = 0>, #ember.shard<offsets = [50, 0], sizes = [50, 8], rank = 1>]>}
ember.table @te : !ember.table<100x8, f32>

// CHECK-LABEL: func.func @kernels
// CHECK: %[[TA:.*]] = ember.table.ref @ta
// CHECK: %[[TB:.*]] = ember.table.ref @tb
// CHECK: %[[TC:.*]] = ember.table.ref @tc
// CHECK: %[[TD:.*]] = ember.table.ref @td
// CHECK: %[[TE:.*]] = ember.table.ref @te
// CHECK: ember.kjt.permute %{{.*}} [0] {{.*}} -> !ember.kjt<["a"], values = i64, lengths = i32>
// CHECK-NEXT: ember.grouped_lookup %{{.*}} tables(%[[TA]]) feature_tables = [0] column_offsets = [0]
// CHECK-NEXT: ember.kjt.permute %{{.*}} [1, 2] {{.*}} -> !ember.kjt<["b", "c"], values = i64, lengths = i32>
// CHECK-NEXT: ember.grouped_lookup %{{.*}} tables(%[[TB]], %[[TC]]) feature_tables = [0, 1] column_offsets = [0, 8]
// CHECK-NEXT: ember.kjt.permute %{{.*}} [3] {{.*}} -> !ember.kjt<["d"], values = i64, lengths = i32>
// CHECK-NEXT: ember.grouped_lookup %{{.*}} tables(%[[TD]]) feature_tables = [0] column_offsets = [0]
// CHECK-NEXT: ember.kjt.permute %{{.*}} [4] {{.*}} -> !ember.kjt<["e"], values = i64, lengths = i32>
// CHECK-NEXT: ember.grouped_lookup %{{.*}} tables(%[[TE]]) feature_tables = [0] column_offsets = [0]
// CHECK-NEXT: ember.keyed_tensor.regroup
// CHECK-SAME: -> !ember.keyed_tensor<["a" : 8, "b" : 8, "c" : 8, "d" : 8, "e" : 8], f32>
func.func @kernels(%kjt: !ember.kjt<["a", "b", "c", "d", "e"], values = i64, lengths = i32>)
    -> !ember.keyed_tensor<["a" : 8, "b" : 8, "c" : 8, "d" : 8, "e" : 8], f32> {
  %ta = ember.table.ref @ta : !ember.table<100x8, f32>
  %tb = ember.table.ref @tb : !ember.table<100x8, f32>
  %tc = ember.table.ref @tc : !ember.table<100x8, f32>
  %td = ember.table.ref @td : !ember.table<100x8, f32>
  %te = ember.table.ref @te : !ember.table<100x8, f32>
  %kt = ember.embedding_bag_collection %kjt tables(%ta, %tb, %tc, %td, %te)
      feature_tables = [0, 1, 2, 3, 4] pooling = [sum, sum, sum, sum, sum]
      : !ember.kjt<["a", "b", "c", "d", "e"], values = i64, lengths = i32>,
        !ember.table<100x8, f32>, !ember.table<100x8, f32>, !ember.table<100x8, f32>,
        !ember.table<100x8, f32>, !ember.table<100x8, f32>
      -> !ember.keyed_tensor<["a" : 8, "b" : 8, "c" : 8, "d" : 8, "e" : 8], f32>
  return %kt : !ember.keyed_tensor<["a" : 8, "b" : 8, "c" : 8, "d" : 8, "e" : 8], f32>
}

// -----

// A weighted KJT with one group keeps its per-sample weights (the grouped
// lookup reads them from the same KJT).
// CHECK-LABEL: func.func @weighted
// CHECK-NEXT: ember.grouped_lookup %{{.*}} feature_tables = [0, 0] column_offsets = [0, 4] pooling = sum
// CHECK-SAME: !ember.kjt<["a", "b"], values = i64, lengths = i64, weighted>
func.func @weighted(%kjt: !ember.kjt<["a", "b"], values = i64, lengths = i64, weighted>,
                    %t: !ember.table<10x4, f16>) -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32> {
  %kt = ember.embedding_bag_collection %kjt tables(%t)
      feature_tables = [0, 0] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i64, weighted>, !ember.table<10x4, f16>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return %kt : !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
}

// -----

// Nothing to group: single embedding bags, grouped lookups and other IR are
// left exactly as they are.
// CHECK-LABEL: func.func @nothing_to_group
// CHECK-NEXT: %[[E:.*]] = ember.embedding_bag
// CHECK-NEXT: %[[G:.*]] = ember.grouped_lookup
// CHECK-NEXT: return %[[E]], %[[G]]
func.func @nothing_to_group(%t: !ember.table<10x4, f32>, %ids: tensor<?xi64>, %offsets: tensor<?xi64>,
                            %kjt: !ember.kjt<["a"], values = i64, lengths = i32>)
    -> (tensor<?x4xf32>, !ember.keyed_tensor<["a" : 4], f32>) {
  %e = ember.embedding_bag %t[%ids, %offsets] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  %g = ember.grouped_lookup %kjt tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return %e, %g : tensor<?x4xf32>, !ember.keyed_tensor<["a" : 4], f32>
}

// -----

// Collections over the two parts of one split KJT: lookups of the same
// format across collections are batched into one grouped lookup over the
// source KJT; each collection's keyed tensor is a regroup of them. The split
// that only fed the collections is gone.
// CHECK-LABEL: func.func @across_split
// CHECK-SAME: (%[[KJT:[^:]*]]: !ember.kjt<["a", "b", "c", "d"], values = i64, lengths = i32>, %[[T0:[^:]*]]: !ember.table<100x16, f32>, %[[T1:[^:]*]]: !ember.table<100x8, f32>, %[[T2:[^:]*]]: !ember.table<100x4, int8_rowwise>)
// CHECK-NOT: ember.kjt.split
// CHECK-NEXT: %[[K0:.*]] = ember.kjt.permute %[[KJT]] [0, 2] {{.*}} -> !ember.kjt<["a", "c"], values = i64, lengths = i32>
// CHECK-NEXT: %[[F32:.*]] = ember.grouped_lookup %[[K0]] tables(%[[T0]], %[[T1]]) feature_tables = [0, 1] column_offsets = [0, 16] pooling = sum
// CHECK-SAME: -> !ember.keyed_tensor<["a" : 16, "c" : 8], f32>
// CHECK-NEXT: %[[K1:.*]] = ember.kjt.permute %[[KJT]] [1, 3] {{.*}} -> !ember.kjt<["b", "d"], values = i64, lengths = i32>
// CHECK-NEXT: %[[I8:.*]] = ember.grouped_lookup %[[K1]] tables(%[[T2]]) feature_tables = [0, 0] column_offsets = [0, 4] pooling = sum
// CHECK-SAME: -> !ember.keyed_tensor<["b" : 4, "d" : 4], f32>
// CHECK-NEXT: %[[R0:.*]] = ember.keyed_tensor.regroup %[[F32]], %[[I8]] {{.*}} -> !ember.keyed_tensor<["a" : 16, "b" : 4], f32>
// CHECK-NEXT: %[[R1:.*]] = ember.keyed_tensor.regroup %[[F32]], %[[I8]] {{.*}} -> !ember.keyed_tensor<["c" : 8, "d" : 4], f32>
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @across_split(%kjt: !ember.kjt<["a", "b", "c", "d"], values = i64, lengths = i32>,
    %t0: !ember.table<100x16, f32>, %t1: !ember.table<100x8, f32>, %t2: !ember.table<100x4, int8_rowwise>)
    -> (!ember.keyed_tensor<["a" : 16, "b" : 4], f32>, !ember.keyed_tensor<["c" : 8, "d" : 4], f32>) {
  %p0, %p1 = ember.kjt.split %kjt [2, 2]
      : !ember.kjt<["a", "b", "c", "d"], values = i64, lengths = i32>
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.kjt<["c", "d"], values = i64, lengths = i32>
  %k0 = ember.embedding_bag_collection %p0 tables(%t0, %t2) feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<100x16, f32>, !ember.table<100x4, int8_rowwise>
      -> !ember.keyed_tensor<["a" : 16, "b" : 4], f32>
  %k1 = ember.embedding_bag_collection %p1 tables(%t1, %t2) feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["c", "d"], values = i64, lengths = i32>, !ember.table<100x8, f32>, !ember.table<100x4, int8_rowwise>
      -> !ember.keyed_tensor<["c" : 8, "d" : 4], f32>
  return %k0, %k1 : !ember.keyed_tensor<["a" : 16, "b" : 4], f32>, !ember.keyed_tensor<["c" : 8, "d" : 4], f32>
}

// -----

// Collections over disjoint permutations of one KJT, covering all its keys:
// one grouped lookup over the KJT itself, and a regroup selecting each
// collection's keys.
// CHECK-LABEL: func.func @across_permutes
// CHECK-SAME: (%[[KJT:[^:]*]]: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %[[T:[^:]*]]: !ember.table<100x8, f32>)
// CHECK-NEXT: %[[G:.*]] = ember.grouped_lookup %[[KJT]] tables(%[[T]]) feature_tables = [0, 0, 0] column_offsets = [0, 8, 16] pooling = sum
// CHECK-NEXT: %[[R0:.*]] = ember.keyed_tensor.regroup %[[G]] {{.*}} -> !ember.keyed_tensor<["c" : 8, "a" : 8], f32>
// CHECK-NEXT: %[[R1:.*]] = ember.keyed_tensor.regroup %[[G]] {{.*}} -> !ember.keyed_tensor<["b" : 8], f32>
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @across_permutes(%kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, %t: !ember.table<100x8, f32>)
    -> (!ember.keyed_tensor<["c" : 8, "a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>) {
  %ca = ember.kjt.permute %kjt [2, 0]
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.kjt<["c", "a"], values = i64, lengths = i32>
  %b = ember.kjt.permute %kjt [1]
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.kjt<["b"], values = i64, lengths = i32>
  %k0 = ember.embedding_bag_collection %ca tables(%t) feature_tables = [0, 0] pooling = [sum]
      : !ember.kjt<["c", "a"], values = i64, lengths = i32>, !ember.table<100x8, f32>
      -> !ember.keyed_tensor<["c" : 8, "a" : 8], f32>
  %k1 = ember.embedding_bag_collection %b tables(%t) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["b"], values = i64, lengths = i32>, !ember.table<100x8, f32>
      -> !ember.keyed_tensor<["b" : 8], f32>
  return %k0, %k1 : !ember.keyed_tensor<["c" : 8, "a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>
}

// -----

// Not merged: two collections over the same keys (a key would be looked up
// twice), collections over different KJTs, and a collection whose table is
// made after the first lookup.
// CHECK-LABEL: func.func @not_mergeable
// CHECK-COUNT-5: ember.grouped_lookup
// CHECK-NOT: ember.grouped_lookup
// CHECK-NOT: ember.keyed_tensor.regroup
func.func @not_mergeable(%kjt: !ember.kjt<["a"], values = i64, lengths = i32>,
                         %other: !ember.kjt<["b"], values = i64, lengths = i32>,
                         %t0: !ember.table<100x8, f32>, %t1: !ember.table<100x8, f32>,
                         %w: tensor<100x8xf32>)
    -> (!ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>,
        !ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>) {
  %k0 = ember.embedding_bag_collection %kjt tables(%t0) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<100x8, f32> -> !ember.keyed_tensor<["a" : 8], f32>
  %k1 = ember.embedding_bag_collection %kjt tables(%t1) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<100x8, f32> -> !ember.keyed_tensor<["a" : 8], f32>
  %k2 = ember.embedding_bag_collection %other tables(%t0) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["b"], values = i64, lengths = i32>, !ember.table<100x8, f32> -> !ember.keyed_tensor<["b" : 8], f32>
  // Over one KJT with disjoint keys, but %late is made between the lookups.
  %ab = ember.kjt.concat %kjt, %other
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.kjt<["b"], values = i64, lengths = i32>
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  %pa, %pb = ember.kjt.split %ab [1, 1]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>
      -> !ember.kjt<["a"], values = i64, lengths = i32>, !ember.kjt<["b"], values = i64, lengths = i32>
  %k3 = ember.embedding_bag_collection %pa tables(%t0) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<100x8, f32> -> !ember.keyed_tensor<["a" : 8], f32>
  %late = ember.table.from_tensor %w : tensor<100x8xf32> -> !ember.table<100x8, f32>
  %k4 = ember.embedding_bag_collection %pb tables(%late) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["b"], values = i64, lengths = i32>, !ember.table<100x8, f32> -> !ember.keyed_tensor<["b" : 8], f32>
  return %k0, %k1, %k2, %k3, %k4 : !ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>,
      !ember.keyed_tensor<["a" : 8], f32>, !ember.keyed_tensor<["b" : 8], f32>
}
