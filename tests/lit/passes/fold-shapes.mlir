// RUN: ember-opt --ember-fold-shapes --split-input-file %s | FileCheck %s

// The batch of an embedding bag is the number of its offsets (one less with
// include_last_offset); its static dim folds to the table dim.
// CHECK-LABEL: func.func @embedding_bag
// CHECK-SAME: (%[[T:[^:]*]]: !ember.table<10x4, f32>, %[[IDS:[^:]*]]: tensor<?xi64>, %[[OFF:[^:]*]]: tensor<?xi64>)
// CHECK: %[[B:.*]] = tensor.dim %[[OFF]], %{{.*}} : tensor<?xi64>
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[BL:.*]] = tensor.dim %[[OFF]], %{{.*}} : tensor<?xi64>
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[B1:.*]] = arith.subi %[[BL]], %[[C1]] : index
// CHECK: return %[[B]], %[[C4]], %[[B1]]
func.func @embedding_bag(%t: !ember.table<10x4, f32>, %ids: tensor<?xi64>, %offsets: tensor<?xi64>) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = ember.embedding_bag %t[%ids, %offsets] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  %d0 = tensor.dim %e, %c0 : tensor<?x4xf32>
  %d1 = tensor.dim %e, %c1 : tensor<?x4xf32>
  %el = ember.embedding_bag %t[%ids, %offsets] pooling = sum include_last_offset
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  %dl = tensor.dim %el, %c0 : tensor<?x4xf32>
  return %d0, %d1, %dl : index, index, index
}

// -----

// The batch of a collection's (or grouped lookup's) keyed tensor is the
// stride of its KJT, also through a regroup; index arithmetic on the
// resolved dims folds.
// CHECK-LABEL: func.func @keyed_tensors
// CHECK-SAME: (%[[KJT:[^:]*]]: !ember.kjt<["a", "b"], values = i64, lengths = i32>
// CHECK: %[[S0:.*]] = ember.kjt.stride %[[KJT]]
// CHECK: %[[S1:.*]] = ember.kjt.stride %[[KJT]]
// CHECK: ember.keyed_tensor.regroup
// CHECK: %[[S2:.*]] = ember.kjt.stride %[[KJT]]
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[P:.*]] = arith.muli %[[S0]], %[[C8]] : index
// CHECK: return %[[S0]], %[[S1]], %[[S2]], %[[P]]
func.func @keyed_tensors(%kjt: !ember.kjt<["a", "b"], values = i64, lengths = i32>,
                         %t0: !ember.table<10x4, f32>, %t1: !ember.table<10x8, f32>)
    -> (index, index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %kt = ember.embedding_bag_collection %kjt tables(%t0, %t1) feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>, !ember.table<10x8, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 8], f32>
  %b = ember.keyed_tensor.get %kt["b"] : !ember.keyed_tensor<["a" : 4, "b" : 8], f32> -> tensor<?x8xf32>
  %db = tensor.dim %b, %c0 : tensor<?x8xf32>
  %g = ember.grouped_lookup %kjt tables(%t0, %t1) feature_tables = [0, 1] column_offsets = [0, 4] pooling = sum
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>, !ember.table<10x8, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 8], f32>
  %gv = ember.keyed_tensor.values %g : !ember.keyed_tensor<["a" : 4, "b" : 8], f32> -> tensor<?x12xf32>
  %dg = tensor.dim %gv, %c0 : tensor<?x12xf32>
  %r = ember.keyed_tensor.regroup %g : !ember.keyed_tensor<["a" : 4, "b" : 8], f32> -> !ember.keyed_tensor<["b" : 8], f32>
  %rb = ember.keyed_tensor.get %r["b"] : !ember.keyed_tensor<["b" : 8], f32> -> tensor<?x8xf32>
  %dr = tensor.dim %rb, %c0 : tensor<?x8xf32>
  %w = tensor.dim %b, %c1 : tensor<?x8xf32>
  %p = arith.muli %db, %w : index
  return %db, %dg, %dr, %p : index, index, index, index
}

// -----

// A keyed tensor made from values has their batch; tensor.empty is
// resolved by upstream patterns.
// CHECK-LABEL: func.func @create_and_empty
// CHECK-SAME: (%[[V:[^:]*]]: tensor<?x12xf32>, %[[N:[^:]*]]: index)
// CHECK: %[[B:.*]] = tensor.dim %[[V]], %{{.*}} : tensor<?x12xf32>
// CHECK: return %[[B]], %[[N]]
func.func @create_and_empty(%v: tensor<?x12xf32>, %n: index) -> (index, index) {
  %c0 = arith.constant 0 : index
  %kt = ember.keyed_tensor.create %v : tensor<?x12xf32> -> !ember.keyed_tensor<["a" : 4, "b" : 8], f32>
  %a = ember.keyed_tensor.get %kt["a"] : !ember.keyed_tensor<["a" : 4, "b" : 8], f32> -> tensor<?x4xf32>
  %da = tensor.dim %a, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %de = tensor.dim %e, %c0 : tensor<?x4xf32>
  return %da, %de : index, index
}

// -----

// Left alone: dims of arguments and of ops whose batch is not known
// statically (a tosa.add may broadcast), a keyed tensor of unknown origin,
// and every non-shape op.
// CHECK-LABEL: func.func @unknown_batches
// CHECK: %[[A:.*]] = tosa.add
// CHECK: tensor.dim %[[A]]
// CHECK: tensor.dim %{{.*}} : tensor<?x8xf32>
// CHECK: ember.keyed_tensor.get
// CHECK: tensor.dim %{{.*}} : tensor<?x4xf32>
// CHECK: arith.addf
func.func @unknown_batches(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>,
                           %kt: !ember.keyed_tensor<["a" : 4], f32>) -> (index, index, index, f32) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %a = tosa.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %da = tensor.dim %a, %c0 : tensor<?x8xf32>
  %dx = tensor.dim %x, %c0 : tensor<?x8xf32>
  %g = ember.keyed_tensor.get %kt["a"] : !ember.keyed_tensor<["a" : 4], f32> -> tensor<?x4xf32>
  %dg = tensor.dim %g, %c0 : tensor<?x4xf32>
  %two = arith.addf %one, %one : f32
  return %da, %dx, %dg, %two : index, index, index, f32
}
