// Runs programs with mutation after ember-functionalize (and after the slice
// cleanup) with upstream lowering and mlir-runner, and checks the numbers
// against values worked out by hand from the mutation semantics.
//
// RUN: ember-opt --ember-functionalize %s \
// RUN: | mlir-opt --convert-elementwise-to-linalg \
// RUN:     --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// RUN:     --convert-scf-to-cf --finalize-memref-to-llvm --convert-func-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: ember-opt --ember-functionalize --ember-simplify-slices --canonicalize %s \
// RUN: | mlir-opt --convert-elementwise-to-linalg \
// RUN:     --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// RUN:     --convert-scf-to-cf --finalize-memref-to-llvm --convert-func-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s

func.func private @printF32(f32)
func.func private @printComma()
func.func private @printI64(i64)
func.func private @printNewline()

func.func @print(%t: tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %t, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %t, %c1 : tensor<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %e = tensor.extract %t[%i, %j] : tensor<?x?xf32>
      func.call @printF32(%e) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
    func.call @printNewline() : () -> ()
  }
  return
}

func.func @print1d(%t: tensor<4xf32>) {
  %e = tensor.expand_shape %t [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %d = tensor.cast %e : tensor<1x4xf32> to tensor<?x?xf32>
  func.call @print(%d) : (tensor<?x?xf32>) -> ()
  return
}

// x[1:4][1:3, 1:4:2] = y on a 4x4 iota.
func.func @nested_write() {
  %x = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0],
                             [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %y = arith.constant dense<[[-1.0, -2.0], [-3.0, -4.0]]> : tensor<2x2xf32>
  %m = ember.mut.from_tensor %x : tensor<4x4xf32> -> !ember.mut<tensor<4x4xf32>>
  %v = ember.mut.slice %m[1, 0] [3, 4] [1, 1] : !ember.mut<tensor<4x4xf32>> -> !ember.mut<tensor<3x4xf32>>
  %w = ember.mut.slice %v[1, 1] [2, 2] [1, 2] : !ember.mut<tensor<3x4xf32>> -> !ember.mut<tensor<2x2xf32>>
  ember.mut.copy %y into %w : tensor<2x2xf32> into !ember.mut<tensor<2x2xf32>>
  %r = ember.mut.to_tensor %m : !ember.mut<tensor<4x4xf32>> -> tensor<4x4xf32>
  %p = tensor.cast %r : tensor<4x4xf32> to tensor<?x?xf32>
  func.call @print(%p) : (tensor<?x?xf32>) -> ()
  return
}
// CHECK-LABEL: 111111
// CHECK-NEXT: 0, 1, 2, 3,
// CHECK-NEXT: 4, 5, 6, 7,
// CHECK-NEXT: 8, -1, 10, -2,
// CHECK-NEXT: 12, -3, 14, -4,

// Interleaved writes and reads, and an in-place add (x += 100) in between.
func.func @interleaved() {
  %x = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %a = arith.constant dense<[10.0, 11.0]> : tensor<2xf32>
  %b = arith.constant dense<[20.0, 21.0]> : tensor<2xf32>
  %hundred = arith.constant dense<100.0> : tensor<4xf32>
  %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
  %lo = ember.mut.slice %m[0] [2] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<2xf32>>
  %hi = ember.mut.slice %m[2] [2] [1] : !ember.mut<tensor<4xf32>> -> !ember.mut<tensor<2xf32>>
  %r0 = ember.mut.to_tensor %lo : !ember.mut<tensor<2xf32>> -> tensor<2xf32>
  ember.mut.copy %a into %lo : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r1 = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  ember.mut.copy %b into %hi : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %cur = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  %sum = arith.addf %cur, %hundred : tensor<4xf32>
  ember.mut.copy %sum into %m : tensor<4xf32> into !ember.mut<tensor<4xf32>>
  %r2 = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  ember.mut.copy %r0 into %lo : tensor<2xf32> into !ember.mut<tensor<2xf32>>
  %r3 = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
  func.call @print1d(%r1) : (tensor<4xf32>) -> ()
  func.call @print1d(%r2) : (tensor<4xf32>) -> ()
  func.call @print1d(%r3) : (tensor<4xf32>) -> ()
  return
}
// CHECK-LABEL: 222222
// CHECK-NEXT: 10, 11, 2, 3,
// CHECK-NEXT: 110, 111, 120, 121,
// CHECK-NEXT: 0, 1, 120, 121,

// A copy into full-range slices (dynamic, INT64_MAX-clamped sizes) of a
// clone, then a strided write into the clone; the source buffer is unchanged.
func.func @clone_chain() {
  %c0 = arith.constant 0 : index
  %max = arith.constant 9223372036854775807 : index
  %xs = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %fs = arith.constant dense<[[9.0, 9.0, 9.0, 9.0], [7.0, 7.0, 7.0, 7.0]]> : tensor<2x4xf32>
  %zero = arith.constant dense<0.0> : tensor<2x2xf32>
  %x = tensor.cast %xs : tensor<2x4xf32> to tensor<?x4xf32>
  %fill = tensor.cast %fs : tensor<2x4xf32> to tensor<?x4xf32>
  %src = ember.mut.from_tensor %x : tensor<?x4xf32> -> !ember.mut<tensor<?x4xf32>>
  %sv = ember.mut.to_tensor %src : !ember.mut<tensor<?x4xf32>> -> tensor<?x4xf32>
  %clone = ember.mut.from_tensor %sv : tensor<?x4xf32> -> !ember.mut<tensor<?x4xf32>>
  %d = tensor.dim %sv, %c0 : tensor<?x4xf32>
  %b = arith.minsi %d, %max : index
  %s0 = ember.mut.slice %clone[0, 0] [%b, 4] [1, 1] : !ember.mut<tensor<?x4xf32>> -> !ember.mut<tensor<?x4xf32>>
  %s1 = ember.mut.slice %s0[0, 0] [%b, 4] [1, 1] : !ember.mut<tensor<?x4xf32>> -> !ember.mut<tensor<?x4xf32>>
  ember.mut.copy %fill into %s1 : tensor<?x4xf32> into !ember.mut<tensor<?x4xf32>>
  %cols = ember.mut.slice %s0[0, 0] [2, 2] [1, 2] : !ember.mut<tensor<?x4xf32>> -> !ember.mut<tensor<2x2xf32>>
  ember.mut.copy %zero into %cols : tensor<2x2xf32> into !ember.mut<tensor<2x2xf32>>
  %rc = ember.mut.to_tensor %clone : !ember.mut<tensor<?x4xf32>> -> tensor<?x4xf32>
  %rs = ember.mut.to_tensor %src : !ember.mut<tensor<?x4xf32>> -> tensor<?x4xf32>
  %pc = tensor.cast %rc : tensor<?x4xf32> to tensor<?x?xf32>
  %ps = tensor.cast %rs : tensor<?x4xf32> to tensor<?x?xf32>
  func.call @print(%pc) : (tensor<?x?xf32>) -> ()
  func.call @print(%ps) : (tensor<?x?xf32>) -> ()
  return
}
// CHECK-LABEL: 333333
// CHECK-NEXT: 0, 9, 0, 9,
// CHECK-NEXT: 0, 7, 0, 7,
// CHECK-NEXT: 1, 2, 3, 4,
// CHECK-NEXT: 5, 6, 7, 8,

// Each scenario is announced by a marker line so that the checks stay with
// their scenario.
func.func @marker(%id: i64) {
  func.call @printI64(%id) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %m1 = arith.constant 111111 : i64
  %m2 = arith.constant 222222 : i64
  %m3 = arith.constant 333333 : i64
  func.call @marker(%m1) : (i64) -> ()
  func.call @nested_write() : () -> ()
  func.call @marker(%m2) : (i64) -> ()
  func.call @interleaved() : () -> ()
  func.call @marker(%m3) : (i64) -> ()
  func.call @clone_chain() : () -> ()
  return
}
