// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s
// The worked example of docs/dialect.md: it must keep parsing and verifying.

// CHECK: ember.table @t_user : !ember.table<1000000x64, int8_rowwise> external("tables/t_user.bin", 0)
ember.table @t_user : !ember.table<1000000x64, int8_rowwise>
    external("tables/t_user.bin", 0)
ember.table @t_item : !ember.table<500000x64, f16>
    external("tables/t_item.bin", 0)

// CHECK-LABEL: func.func @sparse_arch
// CHECK: ember.kjt.create
// CHECK: ember.embedding_bag_collection {{.*}} -> !ember.keyed_tensor<["user" : 64, "item" : 64], f32>
// CHECK: ember.keyed_tensor.get {{.*}}["user"]
// CHECK: ember.keyed_tensor.get {{.*}}["item"]
// CHECK: tosa.concat
func.func @sparse_arch(%bottom: tensor<?x64xf32>, %ids: tensor<?xi64>,
                       %lengths: tensor<?xi32>) -> tensor<?x192xf32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["user", "item"], values = i64, lengths = i32>
  %t_user = ember.table.ref @t_user : !ember.table<1000000x64, int8_rowwise>
  %t_item = ember.table.ref @t_item : !ember.table<500000x64, f16>
  %pooled = ember.embedding_bag_collection %kjt tables(%t_user, %t_item)
      feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
        !ember.table<1000000x64, int8_rowwise>, !ember.table<500000x64, f16>
      -> !ember.keyed_tensor<["user" : 64, "item" : 64], f32>
  %user = ember.keyed_tensor.get %pooled["user"]
      : !ember.keyed_tensor<["user" : 64, "item" : 64], f32> -> tensor<?x64xf32>
  %item = ember.keyed_tensor.get %pooled["item"]
      : !ember.keyed_tensor<["user" : 64, "item" : 64], f32> -> tensor<?x64xf32>
  %features = tosa.concat %bottom, %user, %item {axis = 1 : i32}
      : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x192xf32>
  return %features : tensor<?x192xf32>
}

// CHECK-LABEL: func.func @row_wise_input_dist
// CHECK: ember.kjt.bucketize {{.*}} block_sizes = [500000, 250000] num_buckets = 2
func.func @row_wise_input_dist(%kjt: !ember.kjt<["user", "item"], values = i64, lengths = i32>)
    -> (!ember.kjt<["user@0", "item@0", "user@1", "item@1"], values = i64, lengths = i32>, tensor<?xi64>) {
  %buckets, %unbucketize = ember.kjt.bucketize %kjt block_sizes = [500000, 250000] num_buckets = 2
      : !ember.kjt<["user", "item"], values = i64, lengths = i32>
      -> !ember.kjt<["user@0", "item@0", "user@1", "item@1"], values = i64, lengths = i32>,
         tensor<?xi64>
  return %buckets, %unbucketize
      : !ember.kjt<["user@0", "item@0", "user@1", "item@1"], values = i64, lengths = i32>, tensor<?xi64>
}
