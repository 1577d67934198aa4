// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// CHECK-LABEL: func.func @jagged
// CHECK-SAME: !ember.jagged<i64>
// CHECK-SAME: !ember.jagged<f32, [4]>
// CHECK-SAME: !ember.jagged<bf16, [2, 3]>
func.func @jagged(%a: !ember.jagged<i64>, %b: !ember.jagged<f32, [4]>,
                  %c: !ember.jagged<bf16, [2, 3]>) {
  return
}

// CHECK-LABEL: func.func @kjt
// CHECK-SAME: !ember.kjt<["user", "item"], values = i64, lengths = i32>
// CHECK-SAME: !ember.kjt<["a"], values = i32, lengths = i64, weighted>
// CHECK-SAME: !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>
// CHECK-SAME: !ember.kjt<["a"], values = i64, lengths = i64, weighted, variable_batch>
// CHECK-SAME: !ember.kjt<[], values = i64, lengths = i32>
func.func @kjt(%a: !ember.kjt<["user", "item"], values = i64, lengths = i32>,
               %b: !ember.kjt<["a"], values = i32, lengths = i64, weighted>,
               %c: !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>,
               %d: !ember.kjt<["a"], values = i64, lengths = i64, variable_batch, weighted>,
               %e: !ember.kjt<[], values = i64, lengths = i32>) {
  return
}

// Keys with characters that need escaping survive the round trip.
// CHECK-LABEL: func.func @kjt_escaped_key
// CHECK-SAME: !ember.kjt<["a\22b", "c d"], values = i64, lengths = i32>
func.func @kjt_escaped_key(%a: !ember.kjt<["a\"b", "c d"], values = i64, lengths = i32>) {
  return
}

// CHECK-LABEL: func.func @keyed_tensor
// CHECK-SAME: !ember.keyed_tensor<["user" : 16, "item" : 32], f32>
// CHECK-SAME: !ember.keyed_tensor<["x" : 1], f16>
func.func @keyed_tensor(%a: !ember.keyed_tensor<["user" : 16, "item" : 32], f32>,
                        %b: !ember.keyed_tensor<["x" : 1], f16>) {
  return
}

// CHECK-LABEL: func.func @awaitable
// CHECK-SAME: !ember.awaitable<tensor<?x64xf32>>
// CHECK-SAME: !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>
func.func @awaitable(%a: !ember.awaitable<tensor<?x64xf32>>,
                     %b: !ember.awaitable<!ember.kjt<["a"], values = i64, lengths = i32>>) {
  return
}

// CHECK-LABEL: func.func @tables
// CHECK-SAME: !ember.table<1000x64, f32>
// CHECK-SAME: !ember.table<10x8, f16>
// CHECK-SAME: !ember.table<10x8, bf16>
// CHECK-SAME: !ember.table<1x3, int8_rowwise>
// CHECK-SAME: !ember.table<7x4, int4_rowwise>
func.func @tables(%a: !ember.table<1000x64, f32>, %b: !ember.table<10x8, f16>,
                  %c: !ember.table<10x8, bf16>, %d: !ember.table<1x3, int8_rowwise>,
                  %e: !ember.table<7x4, int4_rowwise>) {
  return
}

// CHECK-LABEL: func.func @mutable
// CHECK-SAME: !ember.mut<tensor<4x8xf32>>
// CHECK-SAME: !ember.mut<tensor<?x8xi64>>
func.func @mutable(%a: !ember.mut<tensor<4x8xf32>>, %b: !ember.mut<tensor<?x8xi64>>) {
  return
}

// CHECK-LABEL: func.func @enum_attrs
// CHECK-SAME: codec = #ember<codec fp8>
// CHECK-SAME: format = #ember<table_format int4_rowwise>
// CHECK-SAME: pooling = #ember<pooling mean>
// CHECK-SAME: reduce = #ember<reduce min>
// CHECK-SAME: sharding_type = #ember<sharding_type table_row_wise>
func.func @enum_attrs() attributes {
    pooling = #ember<pooling mean>, format = #ember<table_format int4_rowwise>,
    codec = #ember<codec fp8>, reduce = #ember<reduce min>,
    sharding_type = #ember<sharding_type table_row_wise>} {
  return
}
