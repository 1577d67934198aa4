// RUN: ember-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// ember.table, ember.table.ref, ember.table.from_tensor
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'ember.table' op initial value must have the table's storage type 'tensor<4x2xf32>', got 'tensor<4x3xf32>'}}
ember.table @t : !ember.table<4x2, f32> init = dense<0.5> : tensor<4x3xf32>

// -----

// expected-error @+1 {{initial value must have the table's storage type 'tensor<4x16xi8>', got 'tensor<4x8xi8>'}}
ember.table @t : !ember.table<4x8, int8_rowwise> init = dense<1> : tensor<4x8xi8>

// -----

// expected-error @+1 {{has both an inline initial value and an external weight file; give at most one}}
ember.table @t : !ember.table<4x2, f32> init = dense<0.5> : tensor<4x2xf32> external("w.bin", 0)

// -----

// expected-error @+1 {{external weights need both a file and a byte offset}}
"ember.table"() {sym_name = "t", type = !ember.table<4x2, f32>, file = "w.bin"} : () -> ()

// -----

// expected-error @+1 {{external weight offset must be non-negative, got -8}}
ember.table @t : !ember.table<4x2, f32> external("w.bin", -8)

// -----

// expected-error @+1 {{external weight file name is empty}}
ember.table @t : !ember.table<4x2, f32> external("", 0)

// -----

// expected-error @+1 {{'sharding' must be an #ember.sharding attribute, got "row_wise"}}
ember.table @t : !ember.table<4x2, f32> {sharding = "row_wise"}

// -----

// The table's sharding must tile it (checked by verifyTableSharding).
// expected-error @+1 {{'ember.table' op row_wise shards cover 51200 of the 64000 elements of the 1000x64 table}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [400, 64], rank = 0>, #ember.shard<offsets = [400, 0], sizes = [400, 64], rank = 1>]>}

// -----

func.func @f() {
  // expected-error @+1 {{'ember.table' op expects parent op 'builtin.module'}}
  ember.table @t : !ember.table<4x2, f32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{refers to unknown table @missing}}
  %t = ember.table.ref @missing : !ember.table<4x2, f32>
  return
}

// -----

func.func @g() {
  return
}
func.func @f() {
  // expected-error @+1 {{@g is a 'func.func', not an ember.table}}
  %t = ember.table.ref @g : !ember.table<4x2, f32>
  return
}

// -----

ember.table @t : !ember.table<4x2, f32>
func.func @f() {
  // expected-error @+1 {{result type '!ember.table<4x2, f16>' does not match the type '!ember.table<4x2, f32>' of table @t}}
  %t = ember.table.ref @t : !ember.table<4x2, f16>
  return
}

// -----

func.func @f(%w: tensor<4x2xf16>) {
  // expected-error @+1 {{weights must have the storage type 'tensor<4x2xf32>' of '!ember.table<4x2, f32>', got 'tensor<4x2xf16>'}}
  %t = ember.table.from_tensor %w : tensor<4x2xf16> -> !ember.table<4x2, f32>
  return
}

// -----

func.func @f(%w: tensor<4x8xi8>) {
  // expected-error @+1 {{weights must have the storage type 'tensor<4x9xi8>' of '!ember.table<4x2, int4_rowwise>', got 'tensor<4x8xi8>'}}
  %t = ember.table.from_tensor %w : tensor<4x8xi8> -> !ember.table<4x2, int4_rowwise>
  return
}

//===----------------------------------------------------------------------===//
// ember.embedding_bag
//===----------------------------------------------------------------------===//

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi32>) {
  // expected-error @+1 {{indices and offsets must have the same element type, got 'i64' and 'i32'}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi32> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>, %w: tensor<?xf32>) {
  // expected-error @+1 {{per-sample weights are only supported with pooling = sum, got pooling = mean}}
  %r = ember.embedding_bag %t[%i, %o] weights(%w) pooling = mean
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>, %w: tensor<?xf32>) {
  // expected-error @+1 {{per-sample weights are only supported with pooling = sum, got pooling = max}}
  %r = ember.embedding_bag %t[%i, %o] weights(%w) pooling = max
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<6xi64>, %o: tensor<?xi64>, %w: tensor<5xf32>) {
  // expected-error @+1 {{per-sample weights must have one entry per index (6), got 5}}
  %r = ember.embedding_bag %t[%i, %o] weights(%w) pooling = sum
      : !ember.table<10x4, f32>, tensor<6xi64>, tensor<?xi64>, tensor<5xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{padding_idx must be in [-10, 10), got 10}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum padding_idx = 10
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{padding_idx must be in [-10, 10), got -11}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum padding_idx = -11
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<0xi64>) {
  // expected-error @+1 {{with include_last_offset, offsets needs at least one entry}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum include_last_offset
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<0xi64> -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{result element type must be f32 or the table's 'f32', got 'f16'}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf16>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{result dim 1 must be the table dim 4, got 8}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<3xi64>) {
  // expected-error @+1 {{result dim 0 must be the number of bags 2, got 3}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum include_last_offset
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<3xi64> -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<3xi64>) {
  // expected-error @+1 {{result dim 0 must be the number of bags 3, got 2}}
  %r = ember.embedding_bag %t[%i, %o] pooling = sum
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<3xi64> -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{unknown pooling mode 'median'; expected sum, mean or max}}
  %r = ember.embedding_bag %t[%i, %o] pooling = median
      : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// ember.embedding_bag_collection
//===----------------------------------------------------------------------===//

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{does not accept a variable_batch KJT: the keyed tensor result has one batch size}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{pooling must have one mode per table (1), got 2}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [sum, sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{feature_tables must have one entry per KJT key (2), got 1}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<[], values = i64, lengths = i32>) {
  // expected-error @+1 {{needs at least one table}}
  %r = "ember.embedding_bag_collection"(%k) {feature_tables = array<i64>, pooling = []}
      : (!ember.kjt<[], values = i64, lengths = i32>) -> !ember.keyed_tensor<[], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{feature_tables[1] (key "b") is 1, out of range for 1 tables}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0, 1] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>, %u: !ember.table<10x8, f32>) {
  // expected-error @+1 {{table #1 is not used by any feature}}
  %r = ember.embedding_bag_collection %k tables(%t, %u) feature_tables = [0] pooling = [sum, sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>, !ember.table<10x8, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result keys must be the KJT keys in order}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0, 0] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["b" : 4, "a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result dim of key "b" must be its table's dim 4, got 8}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0, 0] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 8], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, weighted>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{weighted KJT feature "a" uses table #0 with pooling = mean; per-sample weights need pooling = sum}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [mean]
      : !ember.kjt<["a"], values = i64, lengths = i32, weighted>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result element type must be f32 or the element type of every table, got 'bf16' for table #0 ('f32')}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [sum]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], bf16>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{unknown pooling mode 'avg'; expected sum, mean or max}}
  %r = ember.embedding_bag_collection %k tables(%t) feature_tables = [0] pooling = [avg]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

//===----------------------------------------------------------------------===//
// ember.embedding_collection, ember.sequence_lookup
//===----------------------------------------------------------------------===//

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{must have one result per KJT key (2), got 1}}
  %r = ember.embedding_collection %k tables(%t) feature_tables = [0, 0]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result #0 (key "a") must have dense shape [4], got '!ember.jagged<f32>'}}
  %r = ember.embedding_collection %k tables(%t) feature_tables = [0]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.jagged<f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f16>) {
  // expected-error @+1 {{result #0 element type must be f32 or 'f16', got 'bf16'}}
  %r = ember.embedding_collection %k tables(%t) feature_tables = [0]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f16>
      -> !ember.jagged<bf16, [4]>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{feature_tables[0] (key "a") is -1, out of range for 1 tables}}
  %r = ember.embedding_collection %k tables(%t) feature_tables = [-1]
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %ids: !ember.jagged<f32>) {
  // expected-error @+1 {{ids must be a jagged list of i32 or i64 ids with no dense dims, got '!ember.jagged<f32>'}}
  %r = ember.sequence_lookup %t[%ids] : !ember.table<10x4, f32>, !ember.jagged<f32> -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %ids: !ember.jagged<i64, [2]>) {
  // expected-error @+1 {{ids must be a jagged list of i32 or i64 ids with no dense dims, got '!ember.jagged<i64, [2]>'}}
  %r = ember.sequence_lookup %t[%ids] : !ember.table<10x4, f32>, !ember.jagged<i64, [2]> -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %ids: !ember.jagged<i64>) {
  // expected-error @+1 {{result must have dense shape [4] (the table dim), got '!ember.jagged<f32, [4, 1]>'}}
  %r = ember.sequence_lookup %t[%ids] : !ember.table<10x4, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [4, 1]>
  return
}

// -----

func.func @f(%t: !ember.table<10x4, f32>, %ids: !ember.jagged<i64>) {
  // expected-error @+1 {{result element type must be f32 or the table's 'f32', got 'f16'}}
  %r = ember.sequence_lookup %t[%ids] : !ember.table<10x4, f32>, !ember.jagged<i64> -> !ember.jagged<f16, [4]>
  return
}

//===----------------------------------------------------------------------===//
// ember.grouped_lookup
//===----------------------------------------------------------------------===//

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{does not accept a variable_batch KJT}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>, %u: !ember.table<10x4, f16>) {
  // expected-error @+1 {{all tables of a group must have one format: table #0 is f32, table #1 is f16}}
  %r = ember.grouped_lookup %k tables(%t, %u) feature_tables = [0, 1] column_offsets = [0, 4] pooling = sum
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>, !ember.table<10x4, f16>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, weighted>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{a weighted KJT needs pooling = sum, got pooling = max}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = max
      : !ember.kjt<["a"], values = i64, lengths = i32, weighted>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{column_offsets must have one entry per KJT key (1), got 2}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0, 4] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result must hold the 1 KJT keys, got 2 keys}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result has no key "a"}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["z" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result dim of key "a" must be its table's dim 4, got 2}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 2], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{column_offsets[1] (key "b") is 0 but the result places that key at column 4}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0, 0] column_offsets = [0, 0] pooling = sum
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>, %t: !ember.table<10x4, f32>) {
  // expected-error @+1 {{result element type must be f32 or the tables' 'f32', got 'f16'}}
  %r = ember.grouped_lookup %k tables(%t) feature_tables = [0] column_offsets = [0] pooling = sum
      : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.table<10x4, f32>
      -> !ember.keyed_tensor<["a" : 4], f16>
  return
}

//===----------------------------------------------------------------------===//
// Jagged tensors
//===----------------------------------------------------------------------===//

// -----

func.func @f(%v: tensor<?x4xf16>, %o: tensor<?xi64>) {
  // expected-error @+1 {{values must be 'tensor<?x4xf32>', got 'tensor<?x4xf16>'}}
  %j = ember.jagged.create %v, %o : tensor<?x4xf16>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%v: tensor<?x3xf32>, %o: tensor<?xi64>) {
  // expected-error @+1 {{values dim 1 must be 4, got 3 (in 'tensor<?x3xf32>')}}
  %j = ember.jagged.create %v, %o : tensor<?x3xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%v: tensor<?x4xf32>, %o: tensor<?xi32>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 64-bit signless integer values}}
  %j = ember.jagged.create %v, %o : tensor<?x4xf32>, tensor<?xi32> -> !ember.jagged<f32, [4]>
  return
}

// -----

func.func @f(%j: !ember.jagged<f32, [4]>) {
  // expected-error @+1 {{result must be 'tensor<?x4xf32>', got 'tensor<?xf32>'}}
  %v = ember.jagged.values %j : !ember.jagged<f32, [4]> -> tensor<?xf32>
  return
}

// -----

func.func @f(%j: !ember.jagged<f32, [4]>) {
  // expected-error @+1 {{result dim 1 must be 8, got 4 (in 'tensor<?x4x4xf32>')}}
  %p = ember.jagged.to_padded %j max_length = 8 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x4x4xf32>
  return
}

// -----

func.func @f(%j: !ember.jagged<f32, [4]>) {
  // expected-error @+1 {{padding value must have the element type 'f32', got 'f16'}}
  %p = ember.jagged.to_padded %j max_length = 8 padding = 0.0 : f16 : !ember.jagged<f32, [4]> -> tensor<?x8x4xf32>
  return
}

// -----

func.func @f(%j: !ember.jagged<f32, [4]>) {
  // expected-error @+1 {{attribute 'max_length' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %p = ember.jagged.to_padded %j max_length = 0 padding = 0.0 : f32 : !ember.jagged<f32, [4]> -> tensor<?x0x4xf32>
  return
}

// -----

func.func @f(%p: tensor<?x8xf32>, %o: tensor<?xi64>) {
  // expected-error @+1 {{padded must be 'tensor<?x?x4xf32>', got 'tensor<?x8xf32>'}}
  %j = ember.jagged.from_padded %p, %o : tensor<?x8xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
  return
}

//===----------------------------------------------------------------------===//
// ember.kjt.from_bags
//===----------------------------------------------------------------------===//

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{needs one values tensor per key (2), got 1}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false] -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{needs one offsets tensor per key (2), got 1}}
  %k = ember.kjt.from_bags values(%v, %v : tensor<?xi64>, tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false, false] -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{include_last_offset needs one entry per key (1), got 2}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false, true] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi32>, %o: tensor<?xi64>) {
  // expected-error @+1 {{values of key 'a' must have the KJT value type 'i64', got 'i32'}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi32>) offsets(%o : tensor<?xi64>) include_last_offset = [false] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<0xi64>) {
  // expected-error @+1 {{offsets of key 'a' need at least one entry with include_last_offset}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<0xi64>) include_last_offset = [true] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{a weighted KJT needs one weights tensor per key}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false] -> !ember.kjt<["a"], values = i64, lengths = i64, weighted>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>, %w: tensor<?xf32>) {
  // expected-error @+1 {{weights given but the KJT type is not weighted}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) weights(%w : tensor<?xf32>) include_last_offset = [false] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<4xi64>, %o: tensor<?xi64>, %w: tensor<3xf32>) {
  // expected-error @+1 {{weights of key 'a' must have one entry per value (4), got 3}}
  %k = ember.kjt.from_bags values(%v : tensor<4xi64>) offsets(%o : tensor<?xi64>) weights(%w : tensor<3xf32>) include_last_offset = [false] -> !ember.kjt<["a"], values = i64, lengths = i64, weighted>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{num_rows needs one entry per key (1), got 2}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false] num_rows = [3, 4] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{num_rows must be non-negative, got -3}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false] num_rows = [-3] -> !ember.kjt<["a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{cannot make a variable_batch KJT}}
  %k = ember.kjt.from_bags values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) include_last_offset = [false] -> !ember.kjt<["a"], values = i64, lengths = i64, variable_batch>
  return
}

//===----------------------------------------------------------------------===//
// ember.kjt.create and accessors
//===----------------------------------------------------------------------===//

// -----

func.func @f(%v: tensor<?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{values must have the KJT value type 'i64', got 'i32'}}
  %k = ember.kjt.create values(%v : tensor<?xi32>) lengths(%l : tensor<?xi32>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>) {
  // expected-error @+1 {{needs lengths or offsets (or both)}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi64>) {
  // expected-error @+1 {{lengths must have the KJT length type 'i32', got 'i64'}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi64>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<5xi32>) {
  // expected-error @+1 {{lengths size 5 is not a multiple of the number of keys (2)}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<5xi32>) -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<?xi64>) {
  // expected-error @+1 {{offsets must have the KJT length type 'i32', got 'i64'}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) offsets(%o : tensor<?xi64>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %o: tensor<0xi32>) {
  // expected-error @+1 {{offsets needs at least one entry}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) offsets(%o : tensor<0xi32>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<4xi32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{offsets must have one more entry than lengths (5), got 4}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<4xi32>) offsets(%o : tensor<4xi32>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi32>) {
  // expected-error @+1 {{a weighted KJT needs weights}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) -> !ember.kjt<["a"], values = i64, lengths = i32, weighted>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi32>, %w: tensor<?xf32>) {
  // expected-error @+1 {{weights given but the KJT type is not weighted}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) weights(%w : tensor<?xf32>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<4xi64>, %l: tensor<?xi32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{weights must have one entry per value (4), got 3}}
  %k = ember.kjt.create values(%v : tensor<4xi64>) lengths(%l : tensor<?xi32>) weights(%w : tensor<3xf32>) -> !ember.kjt<["a"], values = i64, lengths = i32, weighted>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi32>) {
  // expected-error @+1 {{a variable_batch KJT needs batch_sizes}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) -> !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi32>, %b: tensor<1xi64>) {
  // expected-error @+1 {{batch_sizes given but the KJT type is not variable_batch}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) batch_sizes(%b : tensor<1xi64>) -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%v: tensor<?xi64>, %l: tensor<?xi32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{batch_sizes must have one entry per key (2), got 3}}
  %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) batch_sizes(%b : tensor<3xi64>) -> !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result element type must be 'i64', got 'i32'}}
  %v = ember.kjt.values %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result element type must be 'i32', got 'i64'}}
  %l = ember.kjt.lengths %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i64>) {
  // expected-error @+1 {{result element type must be 'i64', got 'i32'}}
  %o = ember.kjt.offsets %k : !ember.kjt<["a"], values = i64, lengths = i64> -> tensor<?xi32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>) {
  // expected-error @+1 {{input KJT is not weighted}}
  %w = ember.kjt.weights %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, weighted>) {
  // expected-error @+1 {{result element type must be 'f32', got 'i64'}}
  %w = ember.kjt.weights %k : !ember.kjt<["a"], values = i64, lengths = i32, weighted> -> tensor<?xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// ember.kjt.permute, split, concat, bucketize
//===----------------------------------------------------------------------===//

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result must have the value/length types and flags of '!ember.kjt<["a", "b"], values = i64, lengths = i32>', got '!ember.kjt<["b", "a"], values = i64, lengths = i64>'}}
  %p = ember.kjt.permute %k [1, 0] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["b", "a"], values = i64, lengths = i64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{permutation[1] = 2 is out of range for 2 keys}}
  %p = ember.kjt.permute %k [1, 2] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["b", "a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{permutation repeats key #0 ("a"); KJT keys must be unique}}
  %p = ember.kjt.permute %k [0, 0] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result keys must be ["b", "a"], got '!ember.kjt<["a", "b"], values = i64, lengths = i32>'}}
  %p = ember.kjt.permute %k [1, 0] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{must have one result per key count (2), got 1}}
  %s = ember.kjt.split %k [1, 1] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{key_counts[0] is negative: -1}}
  %s:2 = ember.kjt.split %k [-1, 3] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<[], values = i64, lengths = i32>, !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{key_counts sum to 1 but the input has 2 keys}}
  %s = ember.kjt.split %k [1] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result #1 must have the value/length types and flags of}}
  %s:2 = ember.kjt.split %k [1, 1] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a"], values = i64, lengths = i32>, !ember.kjt<["b"], values = i32, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result #0 keys must be ["a"], got '!ember.kjt<["b"], values = i64, lengths = i32>'}}
  %s:2 = ember.kjt.split %k [1, 1] : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["b"], values = i64, lengths = i32>, !ember.kjt<["a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{needs at least one input}}
  %c = "ember.kjt.concat"() : () -> !ember.kjt<[], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%a: !ember.kjt<["a"], values = i64, lengths = i32>, %b: !ember.kjt<["b"], values = i64, lengths = i32, weighted>) {
  // expected-error @+1 {{input #1 must have the value/length types and flags of '!ember.kjt<["a", "b"], values = i64, lengths = i32>'}}
  %c = ember.kjt.concat %a, %b : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.kjt<["b"], values = i64, lengths = i32, weighted> -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%a: !ember.kjt<["a"], values = i64, lengths = i32>, %b: !ember.kjt<["b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result keys must be ["a", "b"], got '!ember.kjt<["b", "a"], values = i64, lengths = i32>'}}
  %c = ember.kjt.concat %a, %b : !ember.kjt<["a"], values = i64, lengths = i32>, !ember.kjt<["b"], values = i64, lengths = i32> -> !ember.kjt<["b", "a"], values = i64, lengths = i32>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{block_sizes must have one entry per key (2), got 1}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10] num_buckets = 2 : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a@0", "b@0", "a@1", "b@1"], values = i64, lengths = i32>, tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{block_sizes[1] (key "b") must be positive, got 0}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10, 0] num_buckets = 2 : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a@0", "b@0", "a@1", "b@1"], values = i64, lengths = i32>, tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32, variable_batch>) {
  // expected-error @+1 {{does not accept a variable_batch KJT}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10] num_buckets = 2 : !ember.kjt<["a"], values = i64, lengths = i32, variable_batch> -> !ember.kjt<["a@0", "a@1"], values = i64, lengths = i32, variable_batch>, tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result must have the value/length types and flags of}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10] num_buckets = 2 : !ember.kjt<["a"], values = i64, lengths = i32> -> !ember.kjt<["a@0", "a@1"], values = i64, lengths = i32, weighted>, tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32>) {
  // expected-error @+1 {{result keys must be ["a@0", "b@0", "a@1", "b@1"], got}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10, 10] num_buckets = 2 : !ember.kjt<["a", "b"], values = i64, lengths = i32> -> !ember.kjt<["a@0", "a@1", "b@0", "b@1"], values = i64, lengths = i32>, tensor<?xi64>
  return
}

// -----

func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>) {
  // expected-error @+1 {{attribute 'num_buckets' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %b, %p = ember.kjt.bucketize %k block_sizes = [10] num_buckets = 0 : !ember.kjt<["a"], values = i64, lengths = i32> -> !ember.kjt<[], values = i64, lengths = i32>, tensor<?xi64>
  return
}

//===----------------------------------------------------------------------===//
// Keyed tensors
//===----------------------------------------------------------------------===//

// -----

func.func @f(%v: tensor<?x40xf32>) {
  // expected-error @+1 {{values dim 1 must be 48, got 40 (in 'tensor<?x40xf32>')}}
  %kt = ember.keyed_tensor.create %v : tensor<?x40xf32> -> !ember.keyed_tensor<["u" : 16, "i" : 32], f32>
  return
}

// -----

func.func @f(%kt: !ember.keyed_tensor<["u" : 16, "i" : 32], f32>) {
  // expected-error @+1 {{result must be 'tensor<?x48xf32>', got 'tensor<?x48xf16>'}}
  %v = ember.keyed_tensor.values %kt : !ember.keyed_tensor<["u" : 16, "i" : 32], f32> -> tensor<?x48xf16>
  return
}

// -----

func.func @f(%kt: !ember.keyed_tensor<["u" : 16, "i" : 32], f32>) {
  // expected-error @+1 {{key "x" is not in '!ember.keyed_tensor<["u" : 16, "i" : 32], f32>'}}
  %v = ember.keyed_tensor.get %kt["x"] : !ember.keyed_tensor<["u" : 16, "i" : 32], f32> -> tensor<?x16xf32>
  return
}

// -----

func.func @f(%kt: !ember.keyed_tensor<["u" : 16, "i" : 32], f32>) {
  // expected-error @+1 {{result dim 1 must be 32, got 16 (in 'tensor<?x16xf32>')}}
  %v = ember.keyed_tensor.get %kt["i"] : !ember.keyed_tensor<["u" : 16, "i" : 32], f32> -> tensor<?x16xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{needs at least one input}}
  %r = "ember.keyed_tensor.regroup"() : () -> !ember.keyed_tensor<["u" : 16], f32>
  return
}

// -----

func.func @f(%a: !ember.keyed_tensor<["u" : 16], f16>) {
  // expected-error @+1 {{input #0 has element type 'f16', expected 'f32'}}
  %r = ember.keyed_tensor.regroup %a : !ember.keyed_tensor<["u" : 16], f16> -> !ember.keyed_tensor<["u" : 16], f32>
  return
}

// -----

func.func @f(%a: !ember.keyed_tensor<["u" : 16], f32>, %b: !ember.keyed_tensor<["u" : 16], f32>) {
  // expected-error @+1 {{result key "u" is in both input #0 and input #1}}
  %r = ember.keyed_tensor.regroup %a, %b : !ember.keyed_tensor<["u" : 16], f32>, !ember.keyed_tensor<["u" : 16], f32> -> !ember.keyed_tensor<["u" : 16], f32>
  return
}

// -----

func.func @f(%a: !ember.keyed_tensor<["u" : 16], f32>) {
  // expected-error @+1 {{result dim of key "u" is 8 but input #0 has 16}}
  %r = ember.keyed_tensor.regroup %a : !ember.keyed_tensor<["u" : 16], f32> -> !ember.keyed_tensor<["u" : 8], f32>
  return
}

// -----

func.func @f(%a: !ember.keyed_tensor<["u" : 16], f32>) {
  // expected-error @+1 {{result key "v" is in no input}}
  %r = ember.keyed_tensor.regroup %a : !ember.keyed_tensor<["u" : 16], f32> -> !ember.keyed_tensor<["u" : 16, "v" : 4], f32>
  return
}

//===----------------------------------------------------------------------===//
// Mutation
//===----------------------------------------------------------------------===//

// -----

func.func @f(%t: tensor<4x8xf16>) {
  // expected-error @+1 {{value type 'tensor<4x8xf16>' does not match 'tensor<4x8xf32>' (element type and rank must be equal)}}
  %m = ember.mut.from_tensor %t : tensor<4x8xf16> -> !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%t: tensor<4x7xf32>) {
  // expected-error @+1 {{value dim 1 is 7 but the mutable tensor's is 8}}
  %m = ember.mut.from_tensor %t : tensor<4x7xf32> -> !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{result type 'tensor<32xf32>' does not match 'tensor<4x8xf32>' (element type and rank must be equal)}}
  %t = ember.mut.to_tensor %m : !ember.mut<tensor<4x8xf32>> -> tensor<32xf32>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>, %t: tensor<5x8xf32>) {
  // expected-error @+1 {{value dim 0 is 5 but the mutable tensor's is 4}}
  ember.mut.copy %t into %m : tensor<5x8xf32> into !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{expected 2 offsets (the source rank), got 1}}
  %v = ember.mut.slice %m[0] [4, 8] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{expected 2 strides (the source rank), got 3}}
  %v = ember.mut.slice %m[0, 0] [4, 8] [1, 1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{has 1 dynamic offsets but 0 index operands for them}}
  %v = "ember.mut.slice"(%m) {operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 4, 8>, static_strides = array<i64: 1, 1>} : (!ember.mut<tensor<4x8xf32>>) -> !ember.mut<tensor<4x8xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{result 'tensor<4x8xf16>' must have the source's element type and rank ('tensor<4x8xf32>')}}
  %v = ember.mut.slice %m[0, 0] [4, 8] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x8xf16>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{offset of dim 1 is negative: -2}}
  %v = ember.mut.slice %m[0, -2] [4, 2] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x2xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{size of dim 0 is negative: -4}}
  %v = ember.mut.slice %m[0, 0] [-4, 2] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<?x2xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{stride of dim 1 must be positive, got 0}}
  %v = ember.mut.slice %m[0, 0] [4, 2] [1, 0] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x2xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{result dim 1 is 3 but the slice size is 2}}
  %v = ember.mut.slice %m[0, 0] [4, 2] [1, 1] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x3xf32>>
  return
}

// -----

func.func @f(%m: !ember.mut<tensor<4x8xf32>>) {
  // expected-error @+1 {{slice of dim 1 (offset 4, size 3, stride 2) runs past the source size 8}}
  %v = ember.mut.slice %m[0, 4] [4, 3] [1, 2] : !ember.mut<tensor<4x8xf32>> -> !ember.mut<tensor<4x3xf32>>
  return
}

// -----

func.func @jagged_sum_not_f32(%j: !ember.jagged<i64, [4]>) -> tensor<?x4xi64> {
  // expected-error @+1 {{takes f32 values, got 'i64'}}
  %s = ember.jagged.sum %j max_length = 2 : !ember.jagged<i64, [4]> -> tensor<?x4xi64>
  return %s : tensor<?x4xi64>
}

// -----

func.func @jagged_sum_bad_result(%j: !ember.jagged<f32, [4]>) -> tensor<?x8xf32> {
  // expected-error @+1 {{result}}
  %s = ember.jagged.sum %j max_length = 2 : !ember.jagged<f32, [4]> -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
