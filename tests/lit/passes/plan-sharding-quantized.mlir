// The sharding planner's memory figures take a table's stored row bytes from
// its format: 2^20 rows of dim 64 are 256 MiB as f32, 72 MiB as int8_rowwise
// (64 codes + f32 scale + f32 bias a row) and 40 MiB as int4_rowwise (32
// bytes of codes + 8). Each table is pinned to its own rank.
// RUN: ember-opt %s -o /dev/null --ember-plan-sharding="world-size=3 table-sharding=t_f32=table_wise@0,t_q8=table_wise@1,t_q4=table_wise@2 report-file=-" | FileCheck %s
// CHECK: t_f32 1048576x64 f32 sum {{.*}}table_wise
// CHECK: t_q8 1048576x64 int8_rowwise sum {{.*}}table_wise
// CHECK: t_q4 1048576x64 int4_rowwise sum {{.*}}table_wise
// CHECK: Per rank
// CHECK: rank {{.*}}| weights
// CHECK-NEXT: 0 {{.*}}| 256.0 {{.*}}
// CHECK-NEXT: 1 {{.*}}| 72.0 {{.*}}
// CHECK-NEXT: 2 {{.*}}| 40.0 {{.*}}

ember.table @t_f32 : !ember.table<1048576x64, f32>
ember.table @t_q8 : !ember.table<1048576x64, int8_rowwise>
ember.table @t_q4 : !ember.table<1048576x64, int4_rowwise>
func.func @main(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["a" : 64, "b" : 64, "c" : 64], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
  %t0 = ember.table.ref @t_f32 : !ember.table<1048576x64, f32>
  %t1 = ember.table.ref @t_q8 : !ember.table<1048576x64, int8_rowwise>
  %t2 = ember.table.ref @t_q4 : !ember.table<1048576x64, int4_rowwise>
  %pooled = ember.embedding_bag_collection %kjt tables(%t0, %t1, %t2)
      feature_tables = [0, 1, 2] pooling = [sum, sum, sum]
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
        !ember.table<1048576x64, f32>, !ember.table<1048576x64, int8_rowwise>,
        !ember.table<1048576x64, int4_rowwise>
      -> !ember.keyed_tensor<["a" : 64, "b" : 64, "c" : 64], f32>
  return %pooled : !ember.keyed_tensor<["a" : 64, "b" : 64, "c" : 64], f32>
}
