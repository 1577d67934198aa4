// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// The dense ops of one kernel each (EmberDenseOps.td), as
// ember-raise-dense-ops makes them and as written by hand.

// CHECK-LABEL: func.func @softmax
// CHECK: ember.softmax %{{.*}} axis = 1 : tensor<?x16xf32>
// CHECK: ember.softmax %{{.*}} axis = -1 : tensor<2x3x4xf32>
func.func @softmax(%x: tensor<?x16xf32>, %y: tensor<2x3x4xf32>)
    -> (tensor<?x16xf32>, tensor<2x3x4xf32>) {
  %0 = ember.softmax %x axis = 1 : tensor<?x16xf32>
  %1 = ember.softmax %y axis = -1 : tensor<2x3x4xf32>
  return %0, %1 : tensor<?x16xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @layer_norm
// CHECK: ember.layer_norm %{{.*}} scale(%{{.*}} : tensor<16xf32>) bias(%{{.*}} : tensor<16xf32>) axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
// CHECK: ember.layer_norm %{{.*}} axis = 1 epsilon = 0.000000e+00 : tensor<?x16xf32>
// CHECK: ember.layer_norm %{{.*}} bias(%{{.*}} : tensor<16xf32>) axis = 1 epsilon = 1.000000e-03 : tensor<?x16xf32>
// Over the last two dims, the scale in the normalized shape.
// CHECK: ember.layer_norm %{{.*}} scale(%{{.*}} : tensor<3x4xf32>) axis = -2 epsilon = 9.99999974E-6 : tensor<2x3x4xf32>
func.func @layer_norm(%x: tensor<?x16xf32>, %g: tensor<16xf32>,
                      %b: tensor<16xf32>, %y: tensor<2x3x4xf32>,
                      %g2: tensor<3x4xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>,
        tensor<2x3x4xf32>) {
  %0 = ember.layer_norm %x scale(%g : tensor<16xf32>) bias(%b : tensor<16xf32>) axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
  %1 = ember.layer_norm %x axis = 1 epsilon = 0.0 : tensor<?x16xf32>
  %2 = ember.layer_norm %x bias(%b : tensor<16xf32>) axis = 1 epsilon = 1.0e-3 : tensor<?x16xf32>
  %3 = ember.layer_norm %y scale(%g2 : tensor<3x4xf32>) axis = -2 epsilon = 9.99999974E-6 : tensor<2x3x4xf32>
  return %0, %1, %2, %3 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @linear
// The importer's layout ([K, N]) with bias and ReLU.
// CHECK: ember.linear %{{.*}}, %{{.*}}, %{{.*}} {activation = "relu", transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
// PyTorch's layout ([N, K], the default), no bias, no activation.
// CHECK: ember.linear %{{.*}}, %{{.*}} : tensor<?x5xf32>, tensor<4x5xf32> -> tensor<?x4xf32>
// Leading dims of x stay.
// CHECK: ember.linear %{{.*}}, %{{.*}} {activation = "tanh"} : tensor<2x3x5xf32>, tensor<4x5xf32> -> tensor<2x3x4xf32>
func.func @linear(%x: tensor<?x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>,
                  %wt: tensor<4x5xf32>, %x3: tensor<2x3x5xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<2x3x4xf32>) {
  %0 = ember.linear %x, %w, %b {activation = "relu", transpose_weight = false} : tensor<?x5xf32>, tensor<5x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %1 = ember.linear %x, %wt : tensor<?x5xf32>, tensor<4x5xf32> -> tensor<?x4xf32>
  %2 = ember.linear %x3, %wt {activation = "tanh"} : tensor<2x3x5xf32>, tensor<4x5xf32> -> tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @dot_interaction
// CHECK: ember.dot_interaction %{{.*}}, %{{.*}} {num_features = 3 : i64} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x22xf32>
// CHECK: ember.dot_interaction %{{.*}}, %{{.*}} {num_features = 3 : i64, pair_order = "torchrec", self_interaction = true} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x26xf32>
func.func @dot_interaction(%x: tensor<?x16xf32>, %e: tensor<?x48xf32>)
    -> (tensor<?x22xf32>, tensor<?x26xf32>) {
  %0 = ember.dot_interaction %x, %e {num_features = 3 : i64} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x22xf32>
  %1 = ember.dot_interaction %x, %e {num_features = 3 : i64, pair_order = "torchrec", self_interaction = true} : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x26xf32>
  return %0, %1 : tensor<?x22xf32>, tensor<?x26xf32>
}

// CHECK-LABEL: func.func @dcn_cross
// CHECK: %[[Y:.*]] = ember.dcn_cross %[[X0:.*]], %[[X0]] weights(%{{.*}} : tensor<8x8xf32>) bias(%{{.*}} : tensor<8xf32>) : tensor<?x8xf32>
// CHECK: ember.dcn_cross %[[X0]], %[[Y]] weights(%{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<8x3xf32>) : tensor<?x8xf32>
func.func @dcn_cross(%x0: tensor<?x8xf32>, %w: tensor<8x8xf32>,
                     %b: tensor<8xf32>, %v: tensor<3x8xf32>,
                     %u: tensor<8x3xf32>) -> tensor<?x8xf32> {
  %0 = ember.dcn_cross %x0, %x0 weights(%w : tensor<8x8xf32>) bias(%b : tensor<8xf32>) : tensor<?x8xf32>
  %1 = ember.dcn_cross %x0, %0 weights(%v, %u : tensor<3x8xf32>, tensor<8x3xf32>) : tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
