// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// CHECK-LABEL: func.func @embedding_bag
func.func @embedding_bag(%t: !ember.table<1000x64, f32>, %ids: tensor<?xi64>,
                         %offsets: tensor<?xi64>, %w: tensor<?xf32>,
                         %ids32: tensor<6xi32>, %off32: tensor<3xi32>,
                         %q: !ember.table<1000x64, int8_rowwise>,
                         %h: !ember.table<1000x64, f16>) {
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] pooling = sum : !ember.table<1000x64, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf32>
  %0 = ember.embedding_bag %t[%ids, %offsets] pooling = sum
      : !ember.table<1000x64, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf32>
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] weights(%{{.*}}) pooling = sum : !ember.table<1000x64, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x64xf32>
  %1 = ember.embedding_bag %t[%ids, %offsets] weights(%w) pooling = sum
      : !ember.table<1000x64, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x64xf32>
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] pooling = mean padding_idx = 0 : !ember.table<1000x64, f32>, tensor<6xi32>, tensor<3xi32> -> tensor<3x64xf32>
  %2 = ember.embedding_bag %t[%ids32, %off32] pooling = mean padding_idx = 0
      : !ember.table<1000x64, f32>, tensor<6xi32>, tensor<3xi32> -> tensor<3x64xf32>
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] pooling = max padding_idx = -1 include_last_offset : !ember.table<1000x64, f32>, tensor<6xi32>, tensor<3xi32> -> tensor<2x64xf32>
  %3 = ember.embedding_bag %t[%ids32, %off32] pooling = max padding_idx = -1 include_last_offset
      : !ember.table<1000x64, f32>, tensor<6xi32>, tensor<3xi32> -> tensor<2x64xf32>
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] pooling = sum : !ember.table<1000x64, int8_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf32>
  %4 = ember.embedding_bag %q[%ids, %offsets] pooling = sum
      : !ember.table<1000x64, int8_rowwise>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf32>
  // CHECK: ember.embedding_bag %{{.*}}[%{{.*}}, %{{.*}}] pooling = sum : !ember.table<1000x64, f16>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf16>
  %5 = ember.embedding_bag %h[%ids, %offsets] pooling = sum
      : !ember.table<1000x64, f16>, tensor<?xi64>, tensor<?xi64> -> tensor<?x64xf16>
  return
}

// CHECK-LABEL: func.func @collection
func.func @collection(%kjt: !ember.kjt<["user", "item", "ctx"], values = i64, lengths = i32>,
                      %wkjt: !ember.kjt<["user"], values = i64, lengths = i32, weighted>,
                      %t0: !ember.table<1000x16, f32>, %t1: !ember.table<500x32, int8_rowwise>) {
  // CHECK: ember.embedding_bag_collection %{{.*}} tables(%{{.*}}, %{{.*}}) feature_tables = [0, 1, 0] pooling = [sum, mean]
  // CHECK-SAME: : !ember.kjt<["user", "item", "ctx"], values = i64, lengths = i32>, !ember.table<1000x16, f32>, !ember.table<500x32, int8_rowwise>
  // CHECK-SAME: -> !ember.keyed_tensor<["user" : 16, "item" : 32, "ctx" : 16], f32>
  %0 = ember.embedding_bag_collection %kjt tables(%t0, %t1)
      feature_tables = [0, 1, 0] pooling = [sum, mean]
      : !ember.kjt<["user", "item", "ctx"], values = i64, lengths = i32>,
        !ember.table<1000x16, f32>, !ember.table<500x32, int8_rowwise>
      -> !ember.keyed_tensor<["user" : 16, "item" : 32, "ctx" : 16], f32>
  // CHECK: ember.embedding_bag_collection %{{.*}} tables(%{{.*}}) feature_tables = [0] pooling = [sum]
  %1 = ember.embedding_bag_collection %wkjt tables(%t0) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["user"], values = i64, lengths = i32, weighted>, !ember.table<1000x16, f32>
      -> !ember.keyed_tensor<["user" : 16], f32>
  return
}

// CHECK-LABEL: func.func @sequence
func.func @sequence(%kjt: !ember.kjt<["user", "item"], values = i64, lengths = i32>,
                    %ids: !ember.jagged<i32>,
                    %t0: !ember.table<1000x16, f32>, %t1: !ember.table<500x32, bf16>) {
  // CHECK: ember.sequence_lookup %{{.*}}[%{{.*}}] : !ember.table<1000x16, f32>, !ember.jagged<i32> -> !ember.jagged<f32, [16]>
  %0 = ember.sequence_lookup %t0[%ids]
      : !ember.table<1000x16, f32>, !ember.jagged<i32> -> !ember.jagged<f32, [16]>
  // CHECK: ember.embedding_collection %{{.*}} tables(%{{.*}}, %{{.*}}) feature_tables = [0, 1]
  // CHECK-SAME: -> !ember.jagged<f32, [16]>, !ember.jagged<bf16, [32]>
  %1:2 = ember.embedding_collection %kjt tables(%t0, %t1) feature_tables = [0, 1]
      : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
        !ember.table<1000x16, f32>, !ember.table<500x32, bf16>
      -> !ember.jagged<f32, [16]>, !ember.jagged<bf16, [32]>
  return
}

// CHECK-LABEL: func.func @grouped
func.func @grouped(%kjt: !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
                   %t0: !ember.table<100x16, f32>, %t1: !ember.table<200x32, f32>) {
  // CHECK: ember.grouped_lookup %{{.*}} tables(%{{.*}}, %{{.*}}) feature_tables = [0, 1, 0] column_offsets = [32, 0, 48] pooling = sum
  // CHECK-SAME: -> !ember.keyed_tensor<["b" : 32, "a" : 16, "c" : 16], f32>
  %0 = ember.grouped_lookup %kjt tables(%t0, %t1)
      feature_tables = [0, 1, 0] column_offsets = [32, 0, 48] pooling = sum
      : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
        !ember.table<100x16, f32>, !ember.table<200x32, f32>
      -> !ember.keyed_tensor<["b" : 32, "a" : 16, "c" : 16], f32>
  return
}
