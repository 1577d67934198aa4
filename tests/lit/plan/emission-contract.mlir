// ember-verify-emission-contract (compiler/plan/EmissionContract.cpp): the
// functions writePlan emits hold only ops some part of the plan emitter
// lowers; the first op outside that set is named, with the pass that would
// have removed it where one exists. A module inside the contract is left
// as it is.

// RUN: ember-opt %s -split-input-file -ember-verify-emission-contract -verify-diagnostics | FileCheck %s --check-prefix=CHECK-OK

// CHECK-OK-LABEL: func.func @main
// CHECK-OK: ember.embedding_bag
// CHECK-OK: tosa.sigmoid
module {
  func.func @main(%ids: tensor<?xi64>, %offsets: tensor<?xi64>) -> tensor<?x2xf32> {
    %w = arith.constant dense<1.0> : tensor<4x2xf32>
    %t = ember.table.from_tensor %w : tensor<4x2xf32> -> !ember.table<4x2, f32>
    %b = ember.embedding_bag %t[%ids, %offsets] pooling = sum : !ember.table<4x2, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x2xf32>
    %s = tosa.sigmoid %b : (tensor<?x2xf32>) -> tensor<?x2xf32>
    return %s : tensor<?x2xf32>
  }
}

// -----

// An in-place update left: ember-functionalize removes those.
module {
  func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'ember.mut.from_tensor' is outside the emission contract: in-place updates are lowered to values by ember-functionalize; run it first}}
    %m = ember.mut.from_tensor %x : tensor<4xf32> -> !ember.mut<tensor<4xf32>>
    ember.mut.copy %y into %m : tensor<4xf32> into !ember.mut<tensor<4xf32>>
    %r = ember.mut.to_tensor %m : !ember.mut<tensor<4xf32>> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

// An embedding collection not yet split into per-feature lookups.
module {
  func.func @main(%k: !ember.kjt<["a"], values = i64, lengths = i32>) -> tensor<?x3x4xf32> {
    %w = arith.constant dense<1.0> : tensor<4x4xf32>
    %t = ember.table.from_tensor %w : tensor<4x4xf32> -> !ember.table<4x4, f32>
    // expected-error @+1 {{'ember.embedding_collection' is outside the emission contract: embedding collections are split into one ember.sequence_lookup per feature by ember-split-embedding-collections; run it first}}
    %a = ember.embedding_collection %k tables(%t) feature_tables = [0]
        : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<4x4, f32>
        -> !ember.jagged<f32, [4]>
    %p = ember.jagged.to_padded %a max_length = 3 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x3x4xf32>
    return %p : tensor<?x3x4xf32>
  }
}

// -----

// A comparison other than x != 0.
module {
  func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
    // expected-error @+1 {{'arith.cmpf' is outside the emission contract: a comparison is emitted only as x != 0 (a cast to bool)}}
    %c = arith.cmpf olt, %x, %y : tensor<4xf32>
    return %c : tensor<4xi1>
  }
}

// -----

// An op no part of the emitter lowers.
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'tosa.sin' is outside the emission contract: no part of the plan emitter lowers it}}
    %s = tosa.sin %x : (tensor<4xf32>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

// Index arithmetic on scalars is read by the shape evaluation; float
// scalars are not plan values.
module {
  func.func @main(%x: tensor<4xf32>, %a: f32) -> tensor<4xf32> {
    // expected-error @+1 {{'arith.addf' is outside the emission contract: scalar results are emitted only for index arithmetic of shapes}}
    %s = arith.addf %a, %a : f32
    return %x : tensor<4xf32>
  }
}

// -----

// A module for two ranks that was not partitioned.
// expected-error @+1 {{the module is for 2 ranks but 'main' was not partitioned (run ember-partition)}}
module attributes {ember.world_size = 2 : i64} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A partitioned module missing a rank's program.
// expected-error @+1 {{the module is for 2 ranks but has no function 'main_rank1'}}
module attributes {ember.world_size = 2 : i64} {
  func.func @main_rank0(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The op outside the contract is found in any rank's program.
module attributes {ember.world_size = 2 : i64} {
  func.func @main_rank0(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @main_rank1(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'tosa.sin' is outside the emission contract}}
    %s = tosa.sin %x : (tensor<4xf32>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}

// -----

// No function to emit.
// expected-error @+1 {{the module has no function 'main' to emit}}
module {
  func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
