// An EmbeddingCollection (two features, two tables) whose features are
// padded to 3 ids, lowered to a plan on one rank and sharded row-wise on two.

// RUN: rm -rf %t && mkdir -p %t
// RUN: ember-compile %s -o %t/one.plan.txt
// RUN: FileCheck %s --check-prefix=CHECK-ONE < %t/one.plan.txt
// RUN: ember-compile %s --world-size 2 --sharding row_wise -o %t/rw.plan.txt
// RUN: FileCheck %s --check-prefix=CHECK-RW < %t/rw.plan.txt

// One rank: per feature, its ids and i64 offsets (no cast), a sequence lookup
// of the ids, and the padding of the looked-up rows with the ids' offsets.
// CHECK-ONE: kernel: "kjt_split"
// CHECK-ONE: kernel: "lengths_to_offsets"
// CHECK-ONE-NOT: kernel: "cast"
// CHECK-ONE: kernel: "embedding_sequence"
// CHECK-ONE-NEXT: inputs: [[TA:[0-9]+]]
// CHECK-ONE-NEXT: inputs: [[IDS_A:[0-9]+]]
// CHECK-ONE-NEXT: outputs: [[ROWS_A:[0-9]+]]
// CHECK-ONE: name: "dim"
// CHECK-ONE-NEXT: i: 4
// CHECK-ONE: kernel: "embedding_sequence"
// CHECK-ONE: name: "dim"
// CHECK-ONE-NEXT: i: 2
// CHECK-ONE: kernel: "jagged_to_padded"
// CHECK-ONE-NEXT: inputs: [[ROWS_A]]
// CHECK-ONE: name: "max_length"
// CHECK-ONE-NEXT: i: 3
// CHECK-ONE: name: "padding_value"
// CHECK-ONE: kernel: "jagged_to_padded"

// Two ranks, row-wise: each feature's one-key KJT is bucketized, sent, looked
// up in this rank's rows and returned by sequence_all_to_all (the KJT's
// lengths tell how many rows come back from each rank), then gathered back
// into input order.
// CHECK-RW: programs {
// CHECK-RW: kernel: "kjt_bucketize"
// CHECK-RW: kernel: "kjt_all_to_all"
// CHECK-RW: kernel: "embedding_sequence"
// CHECK-RW: kernel: "sequence_all_to_all"
// CHECK-RW-NEXT: inputs: {{[0-9]+}}
// CHECK-RW-NEXT: inputs: {{[0-9]+}}
// CHECK-RW-NEXT: outputs: {{[0-9]+}}
// CHECK-RW-NEXT: attrs {
// CHECK-RW-NEXT: name: "key_splits"
// CHECK-RW-NEXT: ints {
// CHECK-RW-NEXT: values: 1
// CHECK-RW-NEXT: values: 1
// CHECK-RW: collective:
// CHECK-RW: kernel: "gather"
// CHECK-RW: kernel: "sequence_all_to_all"
// CHECK-RW: kernel: "jagged_to_padded"
// CHECK-RW: rank: 1
// CHECK-RW: kernel: "sequence_all_to_all"
module {
  func.func @main(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) -> (tensor<?x3x4xf32>, tensor<?x3x2xf32>) {
    %w0 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]> : tensor<4x4xf32>
    %t0 = ember.table.from_tensor %w0 : tensor<4x4xf32> -> !ember.table<4x4, f32>
    %w1 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %t1 = ember.table.from_tensor %w1 : tensor<3x2xf32> -> !ember.table<3x2, f32>
    %a, %b = ember.embedding_collection %k tables(%t0, %t1) feature_tables = [0, 1]
        {ember.table_names = ["ta", "tb"], ember.module = "ec"}
        : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<4x4, f32>, !ember.table<3x2, f32>
        -> !ember.jagged<f32, [4]>, !ember.jagged<f32, [2]>
    %pa = ember.jagged.to_padded %a max_length = 3 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x3x4xf32>
    %pb = ember.jagged.to_padded %b max_length = 3 padding = 0.0 : f32 : !ember.jagged<f32, [2]> -> tensor<?x3x2xf32>
    return %pa, %pb : tensor<?x3x4xf32>, tensor<?x3x2xf32>
  }
}
