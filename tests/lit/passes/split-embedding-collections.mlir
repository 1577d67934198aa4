// RUN: ember-opt %s -split-input-file -ember-split-embedding-collections | FileCheck %s

// Each key of the collection's KJT becomes a one-key part, a jagged tensor of
// its ids (i64 offsets, also for i32 lengths) and a sequence lookup in its
// table; the lookups keep the table names and the module path. Key "c" reads
// table 0 like "a".
// CHECK-LABEL: func.func @collection
// CHECK-SAME: (%[[K:.*]]: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>)
// CHECK-DAG: %[[T0:.*]] = ember.table.from_tensor {{.*}} -> !ember.table<4x4, f32>
// CHECK-DAG: %[[T1:.*]] = ember.table.from_tensor {{.*}} -> !ember.table<3x2, f32>
// CHECK: %[[S:.*]]:3 = ember.kjt.split %[[K]] [1, 1, 1]
// CHECK: %[[V0:.*]] = ember.kjt.values %[[S]]#0
// CHECK: %[[O0:.*]] = ember.kjt.offsets %[[S]]#0 : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi64>
// CHECK: %[[J0:.*]] = ember.jagged.create %[[V0]], %[[O0]] : tensor<?xi64>, tensor<?xi64> -> !ember.jagged<i64>
// CHECK: %[[A:.*]] = ember.sequence_lookup %[[T0]][%[[J0]]] {ember.module = "sparse.ec", ember.table_name = "t_a"} : !ember.table<4x4, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [4]>
// CHECK: %[[V1:.*]] = ember.kjt.values %[[S]]#1
// CHECK: ember.sequence_lookup %[[T1]][{{.*}}] {ember.module = "sparse.ec", ember.table_name = "t_b"} {{.*}} -> !ember.jagged<f32, [2]>
// CHECK: ember.sequence_lookup %[[T0]][{{.*}}] {ember.module = "sparse.ec", ember.table_name = "t_a"} {{.*}} -> !ember.jagged<f32, [4]>
// CHECK-NOT: ember.embedding_collection
// CHECK: ember.jagged.to_padded %[[A]]
func.func @collection(%k: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>)
    -> (tensor<?x3x4xf32>, !ember.jagged<f32, [2]>, !ember.jagged<f32, [4]>) {
  %w0 = arith.constant dense<1.0> : tensor<4x4xf32>
  %t0 = ember.table.from_tensor %w0 : tensor<4x4xf32> -> !ember.table<4x4, f32>
  %w1 = arith.constant dense<2.0> : tensor<3x2xf32>
  %t1 = ember.table.from_tensor %w1 : tensor<3x2xf32> -> !ember.table<3x2, f32>
  %a, %b, %c = ember.embedding_collection %k tables(%t0, %t1) feature_tables = [0, 1, 0]
      {ember.table_names = ["t_a", "t_b"], ember.module = "sparse.ec"}
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>, !ember.table<4x4, f32>, !ember.table<3x2, f32>
      -> !ember.jagged<f32, [4]>, !ember.jagged<f32, [2]>, !ember.jagged<f32, [4]>
  %pa = ember.jagged.to_padded %a max_length = 3 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x3x4xf32>
  return %pa, %b, %c : tensor<?x3x4xf32>, !ember.jagged<f32, [2]>, !ember.jagged<f32, [4]>
}

// -----

// Without names the lookups carry none (the planner names the tables after
// their features).
// CHECK-LABEL: func.func @unnamed
// CHECK: ember.sequence_lookup
// CHECK-NOT: ember.table_name
// CHECK-NOT: ember.module
// CHECK: return
func.func @unnamed(%k: !ember.kjt<["a"], values = i32, lengths = i64>) -> !ember.jagged<f32, [4]> {
  %w0 = arith.constant dense<1.0> : tensor<4x4xf32>
  %t0 = ember.table.from_tensor %w0 : tensor<4x4xf32> -> !ember.table<4x4, f32>
  %a = ember.embedding_collection %k tables(%t0) feature_tables = [0]
      : !ember.kjt<["a"], values = i32, lengths = i64>, !ember.table<4x4, f32> -> !ember.jagged<f32, [4]>
  return %a : !ember.jagged<f32, [4]>
}
