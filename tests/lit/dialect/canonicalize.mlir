// RUN: ember-opt %s -split-input-file -canonicalize | FileCheck %s

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @identity_permute
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK-NOT: ember.kjt.permute
// CHECK: return %[[K]]
func.func @identity_permute(%k: !kjt) -> !kjt {
  %p = ember.kjt.permute %k [0, 1, 2] : !kjt -> !kjt
  return %p : !kjt
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>

// permute(permute(k, [2, 0, 1]), [1, 2]) = permute(k, [0, 1])
// CHECK-LABEL: func.func @permute_of_permute
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK: %[[P:.*]] = ember.kjt.permute %[[K]] [0, 1] : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
// CHECK-NEXT: return %[[P]]
func.func @permute_of_permute(%k: !kjt) -> !ember.kjt<["a", "b"], values = i64, lengths = i32> {
  %p = ember.kjt.permute %k [2, 0, 1] : !kjt -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
  %q = ember.kjt.permute %p [1, 2]
      : !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return %q : !ember.kjt<["a", "b"], values = i64, lengths = i32>
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>

// A permutation and its inverse cancel out.
// CHECK-LABEL: func.func @permute_inverse
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK-NOT: ember.kjt.permute
// CHECK: return %[[K]]
func.func @permute_inverse(%k: !kjt) -> !kjt {
  %p = ember.kjt.permute %k [2, 0, 1] : !kjt -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
  %q = ember.kjt.permute %p [1, 2, 0] : !ember.kjt<["c", "a", "b"], values = i64, lengths = i32> -> !kjt
  return %q : !kjt
}

// -----

// CHECK-LABEL: func.func @kjt_pack_unpack
// CHECK-SAME: (%[[V:[^:]*]]: tensor<?xi64>, %[[L:[^:]*]]: tensor<?xi32>, %[[W:[^:]*]]: tensor<?xf32>)
// CHECK-NOT: ember.kjt.
// CHECK: return %[[V]], %[[L]], %[[W]]
func.func @kjt_pack_unpack(%v: tensor<?xi64>, %l: tensor<?xi32>, %w: tensor<?xf32>)
    -> (tensor<?xi64>, tensor<?xi32>, tensor<?xf32>) {
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) weights(%w : tensor<?xf32>)
      -> !ember.kjt<["a"], values = i64, lengths = i32, weighted>
  %v2 = ember.kjt.values %k : !ember.kjt<["a"], values = i64, lengths = i32, weighted> -> tensor<?xi64>
  %l2 = ember.kjt.lengths %k : !ember.kjt<["a"], values = i64, lengths = i32, weighted> -> tensor<?xi32>
  %w2 = ember.kjt.weights %k : !ember.kjt<["a"], values = i64, lengths = i32, weighted> -> tensor<?xf32>
  return %v2, %l2, %w2 : tensor<?xi64>, tensor<?xi32>, tensor<?xf32>
}

// -----

// Offsets are not derived from lengths by folding: they stay an accessor.
// CHECK-LABEL: func.func @kjt_offsets_not_given
// CHECK: ember.kjt.create
// CHECK: ember.kjt.offsets
func.func @kjt_offsets_not_given(%v: tensor<?xi64>, %l: tensor<?xi32>) -> tensor<?xi32> {
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>)
      -> !ember.kjt<["a"], values = i64, lengths = i32>
  %o = ember.kjt.offsets %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi32>
  return %o : tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @kjt_offsets_variable_batch
// CHECK-SAME: (%[[V:[^:]*]]: tensor<?xi64>, %[[O:[^:]*]]: tensor<?xi32>, %[[B:[^:]*]]: tensor<2xi32>)
// CHECK: return %[[O]]
func.func @kjt_offsets_variable_batch(%v: tensor<?xi64>, %o: tensor<?xi32>, %b: tensor<2xi32>)
    -> tensor<?xi32> {
  %k = ember.kjt.create values(%v : tensor<?xi64>) offsets(%o : tensor<?xi32>) batch_sizes(%b : tensor<2xi32>)
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>
  %o2 = ember.kjt.offsets %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch> -> tensor<?xi32>
  return %o2 : tensor<?xi32>
}

// -----

// An accessor with a more static type than the operand is not folded.
// CHECK-LABEL: func.func @kjt_accessor_type_differs
// CHECK: ember.kjt.values
func.func @kjt_accessor_type_differs(%v: tensor<?xi64>, %l: tensor<?xi32>) -> tensor<5xi64> {
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>)
      -> !ember.kjt<["a"], values = i64, lengths = i32>
  %v2 = ember.kjt.values %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<5xi64>
  return %v2 : tensor<5xi64>
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @split_one_part
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK-NOT: ember.kjt.split
// CHECK: return %[[K]]
func.func @split_one_part(%k: !kjt) -> !kjt {
  %s = ember.kjt.split %k [3] : !kjt -> !kjt
  return %s : !kjt
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
!ab = !ember.kjt<["a", "b"], values = i64, lengths = i32>
!c = !ember.kjt<["c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @concat_of_split
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK-NOT: ember.kjt.
// CHECK: return %[[K]]
func.func @concat_of_split(%k: !kjt) -> !kjt {
  %s:2 = ember.kjt.split %k [2, 1] : !kjt -> !ab, !c
  %c = ember.kjt.concat %s#0, %s#1 : !ab, !c -> !kjt
  return %c : !kjt
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
!ab = !ember.kjt<["a", "b"], values = i64, lengths = i32>
!c = !ember.kjt<["c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @split_of_concat
// CHECK-SAME: (%[[AB:[^:]*]]: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %[[C:[^:]*]]: !ember.kjt
// CHECK-NOT: ember.kjt.
// CHECK: return %[[C]], %[[AB]]
func.func @split_of_concat(%ab: !ab, %c: !c) -> (!c, !ab) {
  %k = ember.kjt.concat %ab, %c : !ab, !c -> !kjt
  %s:2 = ember.kjt.split %k [2, 1] : !kjt -> !ab, !c
  return %s#1, %s#0 : !c, !ab
}

// -----

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
!ab = !ember.kjt<["a", "b"], values = i64, lengths = i32>
!c = !ember.kjt<["c"], values = i64, lengths = i32>

// Concatenating split parts in another order is a permute, not the input.
// CHECK-LABEL: func.func @concat_of_split_reordered
// CHECK: ember.kjt.split
// CHECK: ember.kjt.concat
func.func @concat_of_split_reordered(%k: !kjt) -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32> {
  %s:2 = ember.kjt.split %k [2, 1] : !kjt -> !ab, !c
  %c = ember.kjt.concat %s#1, %s#0 : !c, !ab -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
  return %c : !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
}

// -----

!c = !ember.kjt<["c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @concat_one
// CHECK-SAME: (%[[K:.*]]: !ember.kjt
// CHECK-NOT: ember.kjt.concat
// CHECK: return %[[K]]
func.func @concat_one(%k: !c) -> !c {
  %c = ember.kjt.concat %k : !c -> !c
  return %c : !c
}

// -----

// CHECK-LABEL: func.func @jagged_pack_unpack
// CHECK-SAME: (%[[V:[^:]*]]: tensor<?x4xf32>, %[[O:[^:]*]]: tensor<?xi64>)
// CHECK-NOT: ember.jagged
// CHECK: return %[[V]], %[[O]]
func.func @jagged_pack_unpack(%v: tensor<?x4xf32>, %o: tensor<?xi64>) -> (tensor<?x4xf32>, tensor<?xi64>) {
  %j = ember.jagged.create %v, %o : tensor<?x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  %v2 = ember.jagged.values %j : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
  %o2 = ember.jagged.offsets %j : !ember.jagged<f32, [4]> -> tensor<?xi64>
  return %v2, %o2 : tensor<?x4xf32>, tensor<?xi64>
}

// -----

// The offsets of a jagged tensor rebuilt from a padded one are its offsets
// operand. (to_padded/from_padded round trips do not fold: padding replaces
// the padded tensor's tail and to_padded truncates long rows.)
// CHECK-LABEL: func.func @from_padded_offsets
// CHECK-SAME: (%[[J:[^:]*]]: !ember.jagged<f32, [4]>, %[[O:[^:]*]]: tensor<?xi64>)
// CHECK: %[[P:.*]] = ember.jagged.to_padded %[[J]]
// CHECK: %[[R:.*]] = ember.jagged.from_padded %[[P]], %[[O]]
// CHECK: return %[[R]], %[[O]]
func.func @from_padded_offsets(%j: !ember.jagged<f32, [4]>, %o: tensor<?xi64>)
    -> (!ember.jagged<f32, [4]>, tensor<?xi64>) {
  %p = ember.jagged.to_padded %j max_length = 8 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x8x4xf32>
  %r = ember.jagged.from_padded %p, %o : tensor<?x8x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  %o2 = ember.jagged.offsets %r : !ember.jagged<f32, [4]> -> tensor<?xi64>
  return %r, %o2 : !ember.jagged<f32, [4]>, tensor<?xi64>
}

// -----

!kt = !ember.keyed_tensor<["user" : 16, "item" : 32], f32>

// CHECK-LABEL: func.func @keyed_tensor_pack_unpack
// CHECK-SAME: (%[[V:[^:]*]]: tensor<?x48xf32>)
// CHECK-NOT: ember.keyed_tensor
// CHECK: return %[[V]]
func.func @keyed_tensor_pack_unpack(%v: tensor<?x48xf32>) -> tensor<?x48xf32> {
  %kt = ember.keyed_tensor.create %v : tensor<?x48xf32> -> !kt
  %v2 = ember.keyed_tensor.values %kt : !kt -> tensor<?x48xf32>
  return %v2 : tensor<?x48xf32>
}

// -----

!kt = !ember.keyed_tensor<["user" : 16, "item" : 32], f32>

// CHECK-LABEL: func.func @regroup_identity
// CHECK-SAME: (%[[KT:.*]]: !ember.keyed_tensor
// CHECK-NOT: ember.keyed_tensor.regroup
// CHECK: return %[[KT]]
func.func @regroup_identity(%kt: !kt) -> !kt {
  %r = ember.keyed_tensor.regroup %kt : !kt -> !kt
  return %r : !kt
}

// -----

// Unused pure lookups are dead code.
// CHECK-LABEL: func.func @dead_lookup
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @dead_lookup(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  %r = ember.embedding_bag %t[%i, %o] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  return
}

// -----

// Reads of a mutable tensor are not moved across writes or removed when a
// write follows; only the unused read disappears.
// CHECK-LABEL: func.func @mutation_kept
// CHECK: %[[A:.*]] = ember.mut.to_tensor
// CHECK: ember.mut.copy
// CHECK: %[[B:.*]] = ember.mut.to_tensor
// CHECK: return %[[A]], %[[B]]
func.func @mutation_kept(%x: !ember.mut<tensor<4xf32>>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = ember.mut.to_tensor %x : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  ember.mut.copy %y into %x : tensor<4xf32> into !ember.mut<tensor<4xf32>>
  %b = ember.mut.to_tensor %x : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  %unused = ember.mut.to_tensor %x : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// A get through a regroup reads the input that holds the key.
// CHECK-LABEL: func.func @get_through_regroup
// CHECK-SAME: (%[[A:[^:]*]]: !ember.keyed_tensor<["u" : 16], f32>, %[[B:[^:]*]]: !ember.keyed_tensor<["i" : 32], f32>)
// CHECK-NOT: ember.keyed_tensor.regroup
// CHECK: %[[I:.*]] = ember.keyed_tensor.get %[[B]]["i"]
// CHECK: return %[[I]]
func.func @get_through_regroup(%a: !ember.keyed_tensor<["u" : 16], f32>, %b: !ember.keyed_tensor<["i" : 32], f32>) -> tensor<?x32xf32> {
  %r = ember.keyed_tensor.regroup %a, %b
      : !ember.keyed_tensor<["u" : 16], f32>, !ember.keyed_tensor<["i" : 32], f32>
      -> !ember.keyed_tensor<["i" : 32, "u" : 16], f32>
  %i = ember.keyed_tensor.get %r["i"] : !ember.keyed_tensor<["i" : 32, "u" : 16], f32> -> tensor<?x32xf32>
  return %i : tensor<?x32xf32>
}
