// RUN: ember-opt %s -split-input-file -verify-diagnostics

// Every verifier error of the dense ops (EmberDenseOps.cpp).

func.func @f(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'ember.softmax' op axis 2 is out of range for an input of rank 2}}
  %0 = ember.softmax %x axis = 2 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @f(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'ember.softmax' op needs an input of rank 1 or more}}
  %0 = ember.softmax %x axis = 0 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<?x16xi32>) -> tensor<?x16xi32> {
  // expected-error @+1 {{'ember.softmax' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = ember.softmax %x axis = 1 : tensor<?x16xi32>
  return %0 : tensor<?x16xi32>
}

// -----

func.func @f(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'ember.layer_norm' op axis -3 is out of range for an input of rank 2}}
  %0 = ember.layer_norm %x axis = -3 epsilon = 1.0e-5 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'ember.layer_norm' op epsilon must be at least 0, got -1}}
  %0 = ember.layer_norm %x axis = 1 epsilon = -1.0 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %g: tensor<8xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'ember.layer_norm' op scale has 8 elements but the normalized dims hold 16}}
  %0 = ember.layer_norm %x scale(%g : tensor<8xf32>) axis = 1 epsilon = 1.0e-5 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %b: tensor<1x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'ember.layer_norm' op bias 'tensor<1x16xf32>' is neither 1-D nor of the normalized shape (the input's dims from axis 1)}}
  %0 = ember.layer_norm %x bias(%b : tensor<1x16xf32>) axis = 1 epsilon = 1.0e-5 : tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'ember.linear' op activation must be "none", "relu", "sigmoid" or "tanh", got "gelu"}}
  %0 = ember.linear %x, %w {activation = "gelu", transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'ember.linear' op input 'tensor<?x5xf32>' has K = 5 but the weight 'tensor<5x4xf32>' has K = 4 ([N, K])}}
  %0 = ember.linear %x, %w : tensor<?x5xf32>, tensor<5x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32>, %w: tensor<1x5x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'ember.linear' op weight must be 2-D, got 'tensor<1x5x4xf32>'}}
  %0 = ember.linear %x, %w : tensor<?x5xf32>, tensor<1x5x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x4xf32>, %b: tensor<1x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'ember.linear' op bias must be [N] with N = 4, got 'tensor<1x4xf32>'}}
  %0 = ember.linear %x, %w, %b {transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x4xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'ember.linear' op result 'tensor<?x3xf32>' must end in N = 4}}
  %0 = ember.linear %x, %w {transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @f(%x: tensor<2x5xf32>, %w: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'ember.linear' op result dim 0 is 3 but the input's is 2}}
  %0 = ember.linear %x, %w {transpose_weight = false} : tensor<2x5xf32>, tensor<5x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %e: tensor<?x48xf32>) -> tensor<?x22xf32> {
  // expected-error @+1 {{'ember.dot_interaction' op pair_order must be "dlrm" or "torchrec", got "random"}}
  %0 = ember.dot_interaction %x, %e {num_features = 3 : i64, pair_order = "random"} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x22xf32>
  return %0 : tensor<?x22xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %e: tensor<?x32xf32>) -> tensor<?x22xf32> {
  // expected-error @+1 {{'ember.dot_interaction' op sparse 'tensor<?x32xf32>' must be [B, F*D] = [B, 48] for 3 features of dim 16}}
  %0 = ember.dot_interaction %x, %e {num_features = 3 : i64} : tensor<?x16xf32>, tensor<?x32xf32> -> tensor<?x22xf32>
  return %0 : tensor<?x22xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %e: tensor<?x48xf32>) -> tensor<?x26xf32> {
  // expected-error @+1 {{'ember.dot_interaction' op result 'tensor<?x26xf32>' must be [B, D + P] = [B, 22]}}
  %0 = ember.dot_interaction %x, %e {num_features = 3 : i64} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x26xf32>
  return %0 : tensor<?x26xf32>
}

// -----

func.func @f(%x: tensor<4x16xf32>, %e: tensor<5x48xf32>) -> tensor<4x22xf32> {
  // expected-error @+1 {{'ember.dot_interaction' op batch sizes differ: 'tensor<4x16xf32>' and 'tensor<5x48xf32>'}}
  %0 = ember.dot_interaction %x, %e {num_features = 3 : i64} : tensor<4x16xf32>, tensor<5x48xf32> -> tensor<4x22xf32>
  return %0 : tensor<4x22xf32>
}

// -----

func.func @f(%x: tensor<?x16xf32>, %e: tensor<?x48xf32>) -> tensor<?x22xf32> {
  // expected-error @+1 {{'ember.dot_interaction' op attribute 'num_features' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = ember.dot_interaction %x, %e {num_features = -1 : i64} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x22xf32>
  return %0 : tensor<?x22xf32>
}

// -----

func.func @f(%x: tensor<?x2x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op x0 and xl must be 2-D ([B, D]), got 'tensor<?x2x8xf32>'}}
  %0 = ember.dcn_cross %x, %x weights(%w : tensor<8x8xf32>) : tensor<?x2x8xf32>
  return %0 : tensor<?x2x8xf32>
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op takes one weight (full rank) or two (V, W: low rank), got 3}}
  %0 = ember.dcn_cross %x, %x weights(%w, %w, %w : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op the weight must be [8, 8] ([out, in]), got 'tensor<8x4xf32>'}}
  %0 = ember.dcn_cross %x, %x weights(%w : tensor<8x4xf32>) : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @f(%x: tensor<?x8xf32>, %v: tensor<3x8xf32>, %u: tensor<8x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op W must be [8, 3] ([out, in]), got 'tensor<8x4xf32>'}}
  %0 = ember.dcn_cross %x, %x weights(%v, %u : tensor<3x8xf32>, tensor<8x4xf32>) : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %b: tensor<4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op bias must be [D] or [D, 1] with D = 8, got 'tensor<4xf32>'}}
  %0 = ember.dcn_cross %x, %x weights(%w : tensor<8x8xf32>) bias(%b : tensor<4xf32>) : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @f(%x: tensor<?x8xf32>, %y: tensor<?x4xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'ember.dcn_cross' op failed to verify that all of {x0, xl, result} have same type}}
  %0 = "ember.dcn_cross"(%x, %y, %w) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<?x8xf32>, tensor<?x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
