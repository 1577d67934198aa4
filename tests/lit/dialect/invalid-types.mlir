// RUN: ember-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{jagged element type must be an integer, index or float type, got 'tensor<2xf32>'}}
func.func @f(%a: !ember.jagged<tensor<2xf32>>)

// -----

// expected-error @+1 {{jagged dense dim #1 must be positive, got 0}}
func.func @f(%a: !ember.jagged<f32, [4, 0]>)

// -----

// expected-error @+1 {{kjt key #1 is empty}}
func.func @f(%a: !ember.kjt<["a", ""], values = i64, lengths = i32>)

// -----

// expected-error @+1 {{kjt key "a" appears more than once}}
func.func @f(%a: !ember.kjt<["a", "b", "a"], values = i64, lengths = i32>)

// -----

// expected-error @+1 {{kjt value type must be i32 or i64, got 'f32'}}
func.func @f(%a: !ember.kjt<["a"], values = f32, lengths = i32>)

// -----

// expected-error @+1 {{kjt length type must be i32 or i64, got 'i16'}}
func.func @f(%a: !ember.kjt<["a"], values = i64, lengths = i16>)

// -----

// expected-error @+1 {{expected 'weighted' or 'variable_batch' (each at most once), got 'pooled'}}
func.func @f(%a: !ember.kjt<["a"], values = i64, lengths = i32, pooled>)

// -----

// expected-error @+1 {{expected 'weighted' or 'variable_batch' (each at most once), got 'weighted'}}
func.func @f(%a: !ember.kjt<["a"], values = i64, lengths = i32, weighted, weighted>)

// -----

// expected-error @+1 {{expected 'values'}}
func.func @f(%a: !ember.kjt<["a"], lengths = i32, values = i64>)

// -----

// expected-error @+1 {{keyed_tensor dim of key "b" must be positive, got 0}}
func.func @f(%a: !ember.keyed_tensor<["a" : 4, "b" : 0], f32>)

// -----

// expected-error @+1 {{keyed_tensor key "a" appears more than once}}
func.func @f(%a: !ember.keyed_tensor<["a" : 4, "a" : 8], f32>)

// -----

// expected-error @+1 {{keyed_tensor key #0 is empty}}
func.func @f(%a: !ember.keyed_tensor<["" : 4], f32>)

// -----

// expected-error @+1 {{keyed_tensor element type must be a float type, got 'i32'}}
func.func @f(%a: !ember.keyed_tensor<["a" : 4], i32>)

// -----

// expected-error @+1 {{expected table shape ROWSxDIM, got 3 dims}}
func.func @f(%a: !ember.table<10x4x2, f32>)

// -----

// expected-error @+1 {{unknown table format 'int2_rowwise'; expected f32, f16, bf16, int8_rowwise or int4_rowwise}}
func.func @f(%a: !ember.table<10x4, int2_rowwise>)

// -----

// expected-error @+1 {{table rows must be positive, got 0}}
func.func @f(%a: !ember.table<0x4, f32>)

// -----

// expected-error @+1 {{table dim must be positive, got 0}}
func.func @f(%a: !ember.table<10x0, f32>)

// -----

// expected-error @+1 {{int4_rowwise table needs an even dim, got 5}}
func.func @f(%a: !ember.table<10x5, int4_rowwise>)


// -----

// expected-error @+2 {{expected ::mlir::ember::PoolingMode to be one of: sum, mean, max}}
// expected-error @+1 {{failed to parse Ember_PoolingModeAttr parameter 'value'}}
func.func @f() attributes {p = #ember<pooling median>}
