// RUN: ember-opt --ember-simplify-slices --split-input-file %s | FileCheck %s

// Whole-tensor extract_slice with static sizes (upstream folds this too).
// CHECK-LABEL: func.func @extract_whole_static
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @extract_whole_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Dynamic batch: the size is tensor.dim of the source (canonicalize keeps it).
// CHECK-LABEL: func.func @extract_whole_dim
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[X]]
func.func @extract_whole_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %0 = tensor.extract_slice %x[0, 0] [%d, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// ONNX Slice(starts = 0, ends = INT64_MAX) as an importer computes the size:
// min(dim, INT64_MAX) - 0 in i64, cast back to index.
// CHECK-LABEL: func.func @extract_whole_clamped
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[X]]
func.func @extract_whole_clamped(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i64
  %max = arith.constant 9223372036854775807 : i64
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %di = arith.index_cast %d : index to i64
  %end = arith.minsi %max, %di : i64
  %size = arith.subi %end, %zero : i64
  %s = arith.index_cast %size : i64 to index
  %0 = tensor.extract_slice %x[0, 0] [%s, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// What the ONNX importer emits for Slice(starts = [0], ends = [INT64_MAX])
// over a dynamic dim: start = min(0, dim), end = min(INT64_MAX, dim),
// size = max(end - start, 0). Canonicalize cannot drop it (it does not know
// that a dim is >= 0); this pass can, before or after canonicalize.
// CHECK-LABEL: func.func @extract_whole_onnx_importer
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[X]]
func.func @extract_whole_onnx_importer(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %x, %c0 : tensor<?x8xf32>
  %zero = arith.constant 0 : index
  %start = arith.minsi %zero, %dim : index
  %max = arith.constant 9223372036854775807 : index
  %end = arith.minsi %max, %dim : index
  %diff = arith.subi %end, %start : index
  %size = arith.maxsi %diff, %zero : index
  %0 = tensor.extract_slice %x[%start, 0] [%size, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Not provably whole: a start of min(0, %n) for an arbitrary %n (it may be
// negative), a size max(dim - %k, 0), and an unsigned max with a negative
// constant.
// CHECK-LABEL: func.func @onnx_clamps_not_whole
// CHECK-COUNT-3: tensor.extract_slice
func.func @onnx_clamps_not_whole(%x: tensor<?x8xf32>, %n: index, %k: index)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %minus1 = arith.constant -1 : index
  %dim = tensor.dim %x, %c0 : tensor<?x8xf32>
  %start = arith.minsi %c0, %n : index
  %0 = tensor.extract_slice %x[%start, 0] [%dim, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %diff = arith.subi %dim, %k : index
  %size = arith.maxsi %diff, %c0 : index
  %1 = tensor.extract_slice %x[0, 0] [%size, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %umax = arith.maxui %dim, %minus1 : index
  %2 = tensor.extract_slice %x[0, 0] [%umax, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A static size equal to a static dim seen through a cast, with a more
// dynamic result type: the source, cast to the result type.
// CHECK-LABEL: func.func @extract_whole_through_cast
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[X]] : tensor<4x8xf32> to tensor<?x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @extract_whole_through_cast(%x: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %c = tensor.cast %x : tensor<4x8xf32> to tensor<?x8xf32>
  %0 = tensor.extract_slice %c[0, 0] [4, 8] [1, 1] : tensor<?x8xf32> to tensor<4x8xf32>
  %1 = tensor.cast %0 : tensor<4x8xf32> to tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// Not whole: an offset, a stride, a smaller size, a size that is the dim
// of another tensor, a clamp constant that may be smaller than the dim, a
// truncating index cast and a rank-reducing slice all stay.
// CHECK-LABEL: func.func @extract_not_whole
// CHECK-COUNT-7: tensor.extract_slice
func.func @extract_not_whole(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %z: tensor<1x8xf32>)
    -> (tensor<?x7xf32>, tensor<?x4xf32>, tensor<?x6xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %small = arith.constant 1000 : index
  %dx = tensor.dim %x, %c0 : tensor<?x8xf32>
  %dy = tensor.dim %y, %c0 : tensor<?x8xf32>
  %clamped = arith.minsi %dx, %small : index
  %d32 = arith.index_cast %dx : index to i32
  %back = arith.index_cast %d32 : i32 to index
  %0 = tensor.extract_slice %x[0, 1] [%dx, 7] [1, 1] : tensor<?x8xf32> to tensor<?x7xf32>
  %1 = tensor.extract_slice %x[0, 0] [%dx, 4] [1, 2] : tensor<?x8xf32> to tensor<?x4xf32>
  %2 = tensor.extract_slice %x[0, 0] [%dx, 6] [1, 1] : tensor<?x8xf32> to tensor<?x6xf32>
  %3 = tensor.extract_slice %x[0, 0] [%dy, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %4 = tensor.extract_slice %x[0, 0] [%clamped, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %5 = tensor.extract_slice %x[0, 0] [%back, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %6 = tensor.extract_slice %z[0, 0] [1, 8] [1, 1] : tensor<1x8xf32> to tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x7xf32>, tensor<?x4xf32>, tensor<?x6xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>
}

// -----

// insert_slice over the whole destination is the inserted value (cast to
// the destination type when needed); the size may be a dim of a value the
// destination was built from by inserts, or a static dim seen through a cast.
// CHECK-LABEL: func.func @insert_whole
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<?x8xf32>, %[[Z:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<1x8xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[C:.*]] = tensor.cast %[[Z]] : tensor<4x8xf32> to tensor<?x8xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[Y]], %[[Y]], %[[C]]
func.func @insert_whole(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %z: tensor<4x8xf32>, %row: tensor<1x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %0 = tensor.insert_slice %y into %x[0, 0] [%d, 8] [1, 1] : tensor<?x8xf32> into tensor<?x8xf32>
  %w = tensor.insert_slice %row into %x[0, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<?x8xf32>
  %1 = tensor.insert_slice %y into %w[0, 0] [%d, 8] [1, 1] : tensor<?x8xf32> into tensor<?x8xf32>
  %zd = tensor.cast %z : tensor<4x8xf32> to tensor<?x8xf32>
  %2 = tensor.insert_slice %z into %zd[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<?x8xf32>
  return %0, %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Not whole: a static size against a dynamic destination stays.
// CHECK-LABEL: func.func @insert_not_whole
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @insert_not_whole(%x: tensor<?x8xf32>, %z: tensor<4x8xf32>, %h: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %0 = tensor.insert_slice %z into %x[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<?x8xf32>
  %1 = tensor.insert_slice %h into %x[0, 4] [%d, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Slice of slice merges into one slice (upstream MergeConsecutiveExtractSlice):
// offsets compose as o1 + o2 * s1, strides multiply.
// CHECK-LABEL: func.func @slice_of_slice
// CHECK-SAME: (%[[X:.*]]: tensor<16x16xf32>)
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][6, 3] [2, 4] [1, 4] : tensor<16x16xf32> to tensor<2x4xf32>
// CHECK-NEXT: return %[[S]]
func.func @slice_of_slice(%x: tensor<16x16xf32>) -> tensor<2x4xf32> {
  %0 = tensor.extract_slice %x[4, 1] [8, 8] [1, 2] : tensor<16x16xf32> to tensor<8x8xf32>
  %1 = tensor.extract_slice %0[2, 1] [2, 4] [1, 2] : tensor<8x8xf32> to tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// With dynamic offsets the composed offset is an affine.apply.
// CHECK: #[[SUM:.*]] = affine_map<()[s0, s1] -> (s0 + s1)>
// CHECK-LABEL: func.func @slice_of_slice_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>, %[[A:.*]]: index, %[[B:.*]]: index)
// CHECK-NEXT: %[[OFF:.*]] = affine.apply #[[SUM]]()[%[[B]], %[[A]]]
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][%[[OFF]]] [2] [1]
// CHECK-NEXT: return %[[S]]
func.func @slice_of_slice_dynamic(%x: tensor<16xf32>, %a: index, %b: index) -> tensor<2xf32> {
  %0 = tensor.extract_slice %x[%a] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %1 = tensor.extract_slice %0[%b] [2] [1] : tensor<8xf32> to tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// A write through a nested view (as ember-functionalize emits it) becomes
// one insert at the composed window.
// CHECK-LABEL: func.func @insert_through_extract
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[Y:.*]]: tensor<2x2xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.insert_slice %[[Y]] into %[[X]][3, 3] [2, 2] [1, 2]
// CHECK-NEXT: return %[[R]]
func.func @insert_through_extract(%x: tensor<8x8xf32>, %y: tensor<2x2xf32>) -> tensor<8x8xf32> {
  %e = tensor.extract_slice %x[2, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %i = tensor.insert_slice %y into %e[1, 3] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<4x8xf32>
  %r = tensor.insert_slice %i into %x[2, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Not merged: the inner insert goes into a different window than the outer
// one writes back, or into a slice of another tensor.
// CHECK-LABEL: func.func @insert_through_other_extract
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: tensor.insert_slice
// CHECK-NEXT: tensor.insert_slice {{.*}}[3, 0] [4, 8] [1, 1]
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: tensor.insert_slice
// CHECK-NEXT: tensor.insert_slice {{.*}}[2, 0] [4, 8] [1, 1]
// CHECK-NEXT: return
func.func @insert_through_other_extract(%x: tensor<8x8xf32>, %z: tensor<8x8xf32>, %y: tensor<2x2xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.extract_slice %x[2, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %i = tensor.insert_slice %y into %e[1, 3] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<4x8xf32>
  %r = tensor.insert_slice %i into %x[3, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  %e2 = tensor.extract_slice %z[2, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  %i2 = tensor.insert_slice %y into %e2[1, 3] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<4x8xf32>
  %r2 = tensor.insert_slice %i2 into %x[2, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %r, %r2 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// tosa.slice from 0 with size -1 (to the end) or the static dim is its input.
// CHECK-LABEL: func.func @tosa_whole
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NOT: tosa.slice
// CHECK: return %[[X]]
func.func @tosa_whole(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %start = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[-1, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %x, %start, %size : (tensor<?x8xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A partial tosa.slice stays.
// CHECK-LABEL: func.func @tosa_partial
// CHECK: tosa.slice
func.func @tosa_partial(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %start = tosa.const_shape {values = dense<[0, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %x, %start, %size : (tensor<?x8xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Only slices are touched: other foldable ops keep their form.
// CHECK-LABEL: func.func @other_ops_untouched
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: arith.constant 2
// CHECK-NEXT: arith.addi
// CHECK-NEXT: return
func.func @other_ops_untouched() -> index {
  %a = arith.constant 1 : index
  %b = arith.constant 2 : index
  %c = arith.addi %a, %b : index
  return %c : index
}

// -----

// A concat of adjacent column slices of one tensor (as the output dist of a
// sharded model gives them back) reads one range of it: the slices merge,
// then the whole-source slice goes. Two tensor.dim ops of the same dim are
// the same size.
// CHECK-LABEL: func.func @concat_adjacent_slices_whole
// CHECK-SAME: (%[[A:.*]]: tensor<?x2xf32>, %[[X:.*]]: tensor<?x12xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[C:.*]] = tosa.concat %[[A]], %[[X]] {axis = 1 : i32} : (tensor<?x2xf32>, tensor<?x12xf32>) -> tensor<?x14xf32>
// CHECK: return %[[C]]
func.func @concat_adjacent_slices_whole(%a: tensor<?x2xf32>, %x: tensor<?x12xf32>) -> tensor<?x14xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x12xf32>
  %d2 = tensor.dim %x, %c0 : tensor<?x12xf32>
  %0 = tensor.extract_slice %x[0, 0] [%d, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %1 = tensor.extract_slice %x[0, 4] [%d2, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %2 = tensor.extract_slice %x[0, 8] [%d, 4] [1, 1] : tensor<?x12xf32> to tensor<?x4xf32>
  %c = tosa.concat %a, %0, %1, %2 {axis = 1 : i32} : (tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x14xf32>
  return %c : tensor<?x14xf32>
}

// -----

// Only the runs that continue one another merge: [0, 2) + [2, 5) do; [8, 9)
// does not follow [2, 5) (a gap); a slice of another tensor, one with a
// stride of 2 stay, and so do columns 4 and 5 of different rows.
// CHECK-LABEL: func.func @concat_only_adjacent_merge
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>, %[[Y:.*]]: tensor<4x10xf32>)
// CHECK-DAG: %[[M:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 5] [1, 1] : tensor<4x10xf32> to tensor<4x5xf32>
// CHECK-DAG: %[[G:.*]] = tensor.extract_slice %[[X]][0, 8] [4, 1] [1, 1]
// CHECK-DAG: %[[O:.*]] = tensor.extract_slice %[[Y]][0, 9] [4, 1] [1, 1]
// CHECK-DAG: %[[S:.*]] = tensor.extract_slice %[[X]][0, 1] [4, 2] [1, 2]
// CHECK-DAG: %[[R:.*]] = tensor.extract_slice %[[X]][1, 5] [3, 1] [1, 1]
// CHECK-DAG: %[[C:.*]] = tosa.concat %[[M]], %[[G]], %[[O]], %[[S]] {axis = 1 : i32}
// CHECK-DAG: %[[Q:.*]] = tensor.extract_slice %[[X]][0, 4] [3, 1] [1, 1]
// CHECK-DAG: %[[D:.*]] = tosa.concat %[[Q]], %[[R]] {axis = 1 : i32}
// CHECK: return %[[C]], %[[D]]
func.func @concat_only_adjacent_merge(%x: tensor<4x10xf32>, %y: tensor<4x10xf32>) -> (tensor<4x9xf32>, tensor<3x2xf32>) {
  %0 = tensor.extract_slice %x[0, 0] [4, 2] [1, 1] : tensor<4x10xf32> to tensor<4x2xf32>
  %1 = tensor.extract_slice %x[0, 2] [4, 3] [1, 1] : tensor<4x10xf32> to tensor<4x3xf32>
  %2 = tensor.extract_slice %x[0, 8] [4, 1] [1, 1] : tensor<4x10xf32> to tensor<4x1xf32>
  %3 = tensor.extract_slice %y[0, 9] [4, 1] [1, 1] : tensor<4x10xf32> to tensor<4x1xf32>
  %4 = tensor.extract_slice %x[0, 1] [4, 2] [1, 2] : tensor<4x10xf32> to tensor<4x2xf32>
  %c = tosa.concat %0, %1, %2, %3, %4 {axis = 1 : i32} : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x2xf32>) -> tensor<4x9xf32>
  %5 = tensor.extract_slice %x[1, 5] [3, 1] [1, 1] : tensor<4x10xf32> to tensor<3x1xf32>
  %z = tensor.extract_slice %x[0, 4] [3, 1] [1, 1] : tensor<4x10xf32> to tensor<3x1xf32>
  %6 = tosa.concat %z, %5 {axis = 1 : i32} : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  return %c, %6 : tensor<4x9xf32>, tensor<3x2xf32>
}

// -----

// Adjacent along the other axis does not merge: the concat is along dim 1,
// the slices continue along dim 0. Adjacent along the concat axis merges
// for tensor.concat too.
// CHECK-LABEL: func.func @concat_axis_matters
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-DAG: %[[T:.*]] = tensor.extract_slice %[[X]][0, 0] [2, 6] [1, 1]
// CHECK-DAG: %[[B:.*]] = tensor.extract_slice %[[X]][2, 0] [2, 6] [1, 1]
// CHECK: %[[C:.*]] = tosa.concat %[[T]], %[[B]] {axis = 1 : i32}
// CHECK: %[[M:.*]] = tensor.extract_slice %[[X]][0, 1] [4, 4] [1, 1]
// CHECK-NOT: tensor.concat
// CHECK: return %[[C]], %[[M]]
func.func @concat_axis_matters(%x: tensor<4x6xf32>) -> (tensor<2x12xf32>, tensor<4x4xf32>) {
  %0 = tensor.extract_slice %x[0, 0] [2, 6] [1, 1] : tensor<4x6xf32> to tensor<2x6xf32>
  %1 = tensor.extract_slice %x[2, 0] [2, 6] [1, 1] : tensor<4x6xf32> to tensor<2x6xf32>
  %c = tosa.concat %0, %1 {axis = 1 : i32} : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x12xf32>
  %2 = tensor.extract_slice %x[0, 1] [4, 1] [1, 1] : tensor<4x6xf32> to tensor<4x1xf32>
  %3 = tensor.extract_slice %x[0, 2] [4, 3] [1, 1] : tensor<4x6xf32> to tensor<4x3xf32>
  %t = tensor.concat dim(1) %2, %3 : (tensor<4x1xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %c, %t : tensor<2x12xf32>, tensor<4x4xf32>
}
