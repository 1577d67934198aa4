// RUN: ember-opt --ember-functionalize --split-input-file %s | FileCheck %s
// RUN: ember-opt --ember-functionalize --ember-simplify-slices --split-input-file %s | FileCheck %s --check-prefix=CLEAN

// IR without mutation is left exactly as it is.
// CHECK-LABEL: func.func @no_mutation
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 8] [1, 1]
// CHECK-NEXT: %[[A:.*]] = tosa.add %[[S]], %[[Y]]
// CHECK-NEXT: return %[[A]]
func.func @no_mutation(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %a = tosa.add %s, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

// x.add_(y); return x: the in-place update is the op on the current value.
// CHECK-LABEL: func.func @inplace_add
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[SUM:.*]] = tosa.add %[[X]], %[[Y]]
// CHECK-NEXT: %[[TWICE:.*]] = tosa.add %[[SUM]], %[[SUM]]
// CHECK-NEXT: return %[[TWICE]]
// CHECK-NOT: ember.mut
func.func @inplace_add(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = ember.mut.from_tensor %x : tensor<4x8xf32> -> !ember.mut<tensor<4x8xf32>>
  %cur = ember.mut.to_tensor %m : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  %sum = tosa.add %cur, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  ember.mut.copy %sum into %m : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
  // x.add_(x)
  %cur2 = ember.mut.to_tensor %m : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  %twice = tosa.add %cur2, %cur2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  ember.mut.copy %twice into %m : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// x[2:6][1:3, 3:7:2] = y: a partial write nested inside a slice becomes an
// insert into the extracted outer window, inserted back into the buffer.
// CHECK-LABEL: func.func @nested_slice_write
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[Y:.*]]: tensor<2x2xf32>)
// CHECK-NEXT: %[[OUTER:.*]] = tensor.extract_slice %[[X]][2, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: %[[IN:.*]] = tensor.insert_slice %[[Y]] into %[[OUTER]][1, 3] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<4x8xf32>
// CHECK-NEXT: %[[NEW:.*]] = tensor.insert_slice %[[IN]] into %[[X]][2, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
// CHECK-NEXT: return %[[NEW]]
// After simplification: one insert at the composed offsets (2+1, 0+3) with
// the inner stride.
// CLEAN-LABEL: func.func @nested_slice_write
// CLEAN-NEXT: %[[NEW:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[3, 3] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<8x8xf32>
// CLEAN-NEXT: return %[[NEW]]
func.func @nested_slice_write(%x: tensor<8x8xf32>, %y: tensor<2x2xf32>) -> tensor<8x8xf32> {
  %m = ember.mut.from_tensor %x : tensor<8x8xf32> -> !ember.mut<tensor<8x8xf32>>
  %v = ember.mut.slice %m[2, 0] [4, 8] [1, 1] : !ember.mut<tensor<8x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  %w = ember.mut.slice %v[1, 3] [2, 2] [1, 2] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<2x2xf32>>
  ember.mut.copy %y into %w : tensor<2x2xf32> into !ember.mut<tensor<2x2xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<8x8xf32>> -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Reads through views see the write made through a sibling view: reading
// the outer window after writing the inner one.
// CHECK-LABEL: func.func @read_view_after_write
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[Y:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[NEW:.*]] = tensor.insert_slice %[[Y]] into %[[X]][3, 0] [2, 8] [1, 1]
// CHECK-NEXT: %[[READ:.*]] = tensor.extract_slice %[[NEW]][2, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: return %[[READ]]
func.func @read_view_after_write(%x: tensor<8x8xf32>, %y: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %m = ember.mut.from_tensor %x : tensor<8x8xf32> -> !ember.mut<tensor<8x8xf32>>
  %rows = ember.mut.slice %m[3, 0] [2, 8] [1, 1] : !ember.mut<tensor<8x8xf32>> -> !ember.mut<tensor<2x8xf32>>
  %window = ember.mut.slice %m[2, 0] [4, 8] [1, 1] : !ember.mut<tensor<8x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  ember.mut.copy %y into %rows : tensor<2x8xf32> into !ember.mut<tensor<2x8xf32>>
  %r = ember.mut.to_tensor %window : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// The hardest pattern of onnx's remove_inplace: a copy into a chain of
// full-range slices of a clone (aten.slice(clone, d, 0, INT64_MAX) three
// times, then copy_). Functionalization gives insert_slice chains that
// ember-simplify-slices reduces to the copied value.
// CHECK-LABEL: func.func @copy_into_full_slices_of_clone
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[FILL:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[E0:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[E1:.*]] = tensor.extract_slice %[[E0]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[I2:.*]] = tensor.insert_slice %[[FILL]] into %[[E1]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[I1:.*]] = tensor.insert_slice %[[I2]] into %[[E0]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[I0:.*]] = tensor.insert_slice %[[I1]] into %[[X]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[SUM:.*]] = tosa.add %[[I0]], %[[X]]
// CHECK-NEXT: return %[[SUM]]
// CLEAN-LABEL: func.func @copy_into_full_slices_of_clone
// CLEAN-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[FILL:.*]]: tensor<2x3x4xf32>)
// CLEAN-NEXT: %[[SUM:.*]] = tosa.add %[[FILL]], %[[X]]
// CLEAN-NEXT: return %[[SUM]]
func.func @copy_into_full_slices_of_clone(%x: tensor<2x3x4xf32>, %fill: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %clone = ember.mut.from_tensor %x : tensor<2x3x4xf32> -> !ember.mut<tensor<2x3x4xf32>>
  %s11 = ember.mut.slice %clone[0, 0, 0] [2, 3, 4] [1, 1, 1] : !ember.mut<tensor<2x3x4xf32>> -> !ember.mut<tensor<2x3x4xf32>>
  %s12 = ember.mut.slice %s11[0, 0, 0] [2, 3, 4] [1, 1, 1] : !ember.mut<tensor<2x3x4xf32>> -> !ember.mut<tensor<2x3x4xf32>>
  %s13 = ember.mut.slice %s12[0, 0, 0] [2, 3, 4] [1, 1, 1] : !ember.mut<tensor<2x3x4xf32>> -> !ember.mut<tensor<2x3x4xf32>>
  ember.mut.copy %fill into %s13 : tensor<2x3x4xf32> into !ember.mut<tensor<2x3x4xf32>>
  %r = ember.mut.to_tensor %clone : !ember.mut<tensor<2x3x4xf32>> -> tensor<2x3x4xf32>
  // The clone's source is not changed by writes to the clone.
  %sum = tosa.add %r, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %sum : tensor<2x3x4xf32>
}

// -----

// The same with a dynamic batch: full-range sizes are tensor.dim of the
// source, clamped the way an importer writes `end = INT64_MAX`.
// CHECK-LABEL: func.func @copy_into_full_slices_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[FILL:.*]]: tensor<?x4xf32>)
// CHECK: %[[B:.*]] = arith.minsi
// CHECK: %[[E0:.*]] = tensor.extract_slice %[[X]][0, 0] [%[[B]], 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK-NEXT: %[[I1:.*]] = tensor.insert_slice %[[FILL]] into %[[E0]][0, 0] [%[[B]], 4] [1, 1]
// CHECK-NEXT: %[[I0:.*]] = tensor.insert_slice %[[I1]] into %[[X]][0, 0] [%[[B]], 4] [1, 1]
// CHECK-NEXT: return %[[I0]]
// CLEAN-LABEL: func.func @copy_into_full_slices_dynamic
// CLEAN-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[FILL:.*]]: tensor<?x4xf32>)
// CLEAN-NOT: tensor.insert_slice
// CLEAN-NOT: tensor.extract_slice
// CLEAN: return %[[FILL]]
func.func @copy_into_full_slices_dynamic(%x: tensor<?x4xf32>, %fill: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %max = arith.constant 9223372036854775807 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  %b = arith.minsi %d, %max : index
  %clone = ember.mut.from_tensor %x : tensor<?x4xf32> -> !ember.mut<tensor<?x4xf32>>
  %s0 = ember.mut.slice %clone[0, 0] [%b, 4] [1, 1] : !ember.mut<tensor<?x4xf32>> -> !ember.mut<tensor<?x4xf32>>
  %s1 = ember.mut.slice %s0[0, 0] [%b, 4] [1, 1] : !ember.mut<tensor<?x4xf32>> -> !ember.mut<tensor<?x4xf32>>
  ember.mut.copy %fill into %s1 : tensor<?x4xf32> into !ember.mut<tensor<?x4xf32>>
  %r = ember.mut.to_tensor %clone : !ember.mut<tensor<?x4xf32>> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// Writes and reads interleaved: each read sees the writes before it and not
// the ones after it.
// CHECK-LABEL: func.func @interleaved
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[R0:.*]] = tensor.extract_slice %[[X]][0] [2] [1]
// CHECK-NEXT: %[[W1:.*]] = tensor.insert_slice %[[A]] into %[[X]][0] [2] [1]
// CHECK-NEXT: %[[R1:.*]] = tensor.extract_slice %[[W1]][0] [2] [1]
// CHECK-NEXT: %[[W2:.*]] = tensor.insert_slice %[[B]] into %[[W1]][2] [2] [1]
// CHECK-NEXT: %[[W3:.*]] = tensor.insert_slice %[[R0]] into %[[W2]][0] [2] [1]
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[W2]], %[[W3]]
func.func @interleaved(%x: tensor<4xf32>, %a: tensor<2xf32>, %b: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  %lo = ember.mut.slice %m[0] [2] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<2xf32>>
  %hi = ember.mut.slice %m[2] [2] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<2xf32>>
  %r0 = ember.mut.to_tensor %lo : !ember.mut<tensor<2xf32>> -> tensor<2xf32>
  ember.mut.copy %a into %lo : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r1 = ember.mut.to_tensor %lo : !ember.mut<tensor<2xf32>> -> tensor<2xf32>
  ember.mut.copy %b into %hi : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r2 = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  // Restore the old low half: the earlier read is a value, not a view.
  ember.mut.copy %r0 into %lo : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r3 = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  return %r0, %r1, %r2, %r3 : tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Several buffers: writes to one are not seen by the other, including a
// clone of a buffer (from_tensor of its current value).
// CHECK-LABEL: func.func @multiple_buffers
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<1xf32>)
// CHECK-NEXT: %[[X1:.*]] = tensor.insert_slice %[[V]] into %[[X]][0] [1] [1]
// CHECK-NEXT: %[[Y1:.*]] = tensor.insert_slice %[[V]] into %[[Y]][3] [1] [1]
// CHECK-NEXT: %[[C1:.*]] = tensor.insert_slice %[[V]] into %[[X1]][1] [1] [1]
// CHECK-NEXT: return %[[X1]], %[[Y1]], %[[C1]]
func.func @multiple_buffers(%x: tensor<4xf32>, %y: tensor<4xf32>, %v: tensor<1xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %mx = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  %my = ember.mut.from_tensor %y : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  %x0 = ember.mut.slice %mx[0] [1] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<1xf32>>
  %y3 = ember.mut.slice %my[3] [1] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<1xf32>>
  ember.mut.copy %v into %x0 : tensor<1xf32> into !ember.mut<tensor<1xf32>>
  ember.mut.copy %v into %y3 : tensor<1xf32> into !ember.mut<tensor<1xf32>>
  // clone = x.clone(); clone[1] = v
  %xv = ember.mut.to_tensor %mx : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  %clone = ember.mut.from_tensor %xv : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  %c1 = ember.mut.slice %clone[1] [1] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<1xf32>>
  ember.mut.copy %v into %c1 : tensor<1xf32> into !ember.mut<tensor<1xf32>>
  %rx = ember.mut.to_tensor %mx : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  %ry = ember.mut.to_tensor %my : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  %rc = ember.mut.to_tensor %clone : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  return %rx, %ry, %rc : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// x[:, 2:4] = y with a dynamic batch and SSA offsets; static and dynamic
// shapes are bridged with tensor.cast.
// CHECK-LABEL: func.func @dynamic_view
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<3x2xf32>, %[[OFF:.*]]: index)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0
// CHECK-NEXT: %[[B:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-NEXT: %[[YC:.*]] = tensor.cast %[[Y]] : tensor<3x2xf32> to tensor<?x2xf32>
// CHECK-NEXT: %[[NEW:.*]] = tensor.insert_slice %[[YC]] into %[[X]][0, %[[OFF]]] [%[[B]], 2] [1, 1]
// CHECK-NEXT: %[[READ:.*]] = tensor.cast %[[NEW]] : tensor<?x8xf32> to tensor<3x8xf32>
// CHECK-NEXT: return %[[READ]]
func.func @dynamic_view(%x: tensor<?x8xf32>, %y: tensor<3x2xf32>, %off: index) -> tensor<3x8xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x8xf32>
  %m = ember.mut.from_tensor %x : tensor<?x8xf32> -> !ember.mut<tensor<?x8xf32>>
  %v = ember.mut.slice %m[0, %off] [%b, 2] [1, 1] : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x2xf32>>
  ember.mut.copy %y into %v : tensor<3x2xf32> into !ember.mut<tensor<?x2xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<?x8xf32>> -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

// A buffer made from a static tensor with a dynamic mutable type, and a
// write that is never read: its tensor ops are erased with the buffer.
// CHECK-LABEL: func.func @cast_and_dead_write
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = tensor.cast %[[X]] : tensor<4xf32> to tensor<?xf32>
// CHECK-NEXT: %[[R:.*]] = tensor.cast %[[C]] : tensor<?xf32> to tensor<4xf32>
// CHECK-NEXT: return %[[R]]
func.func @cast_and_dead_write(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<?xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<?xf32>> -> tensor<4xf32>
  ember.mut.copy %y into %m : tensor<4xf32> into !ember.mut<tensor<?xf32>>
  %unused = ember.mut.slice %m[0] [2] [1] : !ember.mut<tensor<?xf32>> -> !ember.mut<tensor<2xf32>>
  return %r : tensor<4xf32>
}

// -----

// A buffer made and used entirely inside a nested region is functionalized
// in that region.
// CHECK-LABEL: func.func @buffer_in_region
// CHECK: scf.if
// CHECK-NEXT: %[[NEW:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1] [1] [1]
// CHECK-NEXT: scf.yield %[[NEW]]
// CHECK-NOT: ember.mut
func.func @buffer_in_region(%c: i1, %x: tensor<4xf32>, %v: tensor<1xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
    %s = ember.mut.slice %m[1] [1] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<1xf32>>
    ember.mut.copy %v into %s : tensor<1xf32> into !ember.mut<tensor<1xf32>>
    %t = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
