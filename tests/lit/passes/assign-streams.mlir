// ember-assign-streams marks the collectives that move data with the stream
// of their communication (ember.stream = 1); stream=0 removes the marks.
// The splits phase of a KJT all-to-all and ops that are not collectives are
// left alone.

// RUN: ember-opt %s -split-input-file -ember-assign-streams | FileCheck %s
// RUN: ember-opt %s -split-input-file -ember-assign-streams -ember-assign-streams=stream=0 | FileCheck %s --check-prefix=CHECK-OFF
// RUN: not ember-opt %s -split-input-file -ember-assign-streams=stream=2 2>&1 | FileCheck %s --check-prefix=CHECK-BAD

// CHECK-LABEL: func.func @collectives
// CHECK: ember.all_reduce {{.*}} {ember.stream = 1 : i32}
// CHECK: ember.all_gather {{.*}} {ember.stream = 1 : i32}
// CHECK: tosa.add
// CHECK-NOT: ember.stream
// CHECK-OFF-LABEL: func.func @collectives
// CHECK-OFF-NOT: ember.stream
// CHECK-BAD: error: ember-assign-streams: stream must be 0 or 1, not 2
func.func @collectives(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %a = ember.all_reduce sum %x group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %r = ember.wait %a : !ember.awaitable<tensor<4x8xf32>>
  %g = ember.all_gather %r group<ranks = [0, 1]> : tensor<4x8xf32> -> !ember.awaitable<tensor<8x8xf32>>
  %y = ember.wait %g : !ember.awaitable<tensor<8x8xf32>>
  %z = tosa.add %y, %y : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @kjt
// CHECK: ember.kjt_all_to_all.splits
// CHECK-NOT: ember.stream
// CHECK: ember.kjt_all_to_all.tensors {{.*}} {ember.stream = 1 : i32}
func.func @kjt(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) -> !ember.kjt<["a"], values = i64, lengths = i32> {
  %s = ember.kjt_all_to_all.splits %k key_splits [1, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.awaitable<tensor<2x3xi64>>
  %sw = ember.wait %s : !ember.awaitable<tensor<2x3xi64>>
  %t = ember.kjt_all_to_all.tensors %k, %sw key_splits [1, 1] group<ranks = [0, 1]> : !ember.kjt<["a", "b"], values = i64, lengths = i32>, tensor<2x3xi64> -> !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>
  %r = ember.wait %t : !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>
  return %r : !ember.kjt<["a"], values = i64, lengths = i32>
}
