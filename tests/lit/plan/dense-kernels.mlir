// The Ember dense ops (EmberDenseOps.td) each become one instruction of the
// kernel of the same name (compiler/plan/PlanDenseKernels.cpp): operands in
// order (an absent optional one is -1), attributes one to one, constant
// weights written as <instruction>.weight/.bias/.gamma/.v/.w; a weight that
// is not a constant is read from its slot.

// RUN: rm -rf %t && mkdir -p %t
// RUN: ember-compile %s -o %t/m.plan.txt
// RUN: FileCheck %s < %t/m.plan.txt

// CHECK: name: "lin.weight"
// CHECK: name: "lin.bias"
// CHECK: name: "ln.gamma"
// CHECK: name: "cross.v"
// CHECK: name: "cross.w"
// CHECK: name: "cross.bias"

// CHECK:      instructions {
// CHECK-NEXT:   kernel: "linear"
// CHECK-NEXT:   inputs: 0
// CHECK-NEXT:   inputs: [[LW:[0-9]+]]
// CHECK-NEXT:   inputs: [[LB:[0-9]+]]
// CHECK-NEXT:   outputs: [[H:[0-9]+]]
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "transpose_weight"
// CHECK-NEXT:     i: 0
// CHECK-NEXT:   }
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "activation"
// CHECK-NEXT:     s: "relu"
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "lin"
// CHECK-NEXT: }
// CHECK-NEXT: instructions {
// CHECK-NEXT:   kernel: "softmax"
// CHECK-NEXT:   inputs: [[H]]
// CHECK-NEXT:   outputs: [[S:[0-9]+]]
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "axis"
// CHECK-NEXT:     i: 1
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "sm"
// CHECK-NEXT: }
// CHECK-NEXT: instructions {
// CHECK-NEXT:   kernel: "layer_norm"
// CHECK-NEXT:   inputs: [[S]]
// CHECK-NEXT:   inputs: {{[0-9]+}}
// CHECK-NEXT:   inputs: -1
// CHECK-NEXT:   outputs: [[N:[0-9]+]]
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "axis"
// CHECK-NEXT:     i: 1
// CHECK-NEXT:   }
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "epsilon"
// CHECK-NEXT:     f: 0.0010000000474974513
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "ln"
// CHECK-NEXT: }
// CHECK-NEXT: instructions {
// CHECK-NEXT:   kernel: "dcn_cross"
// CHECK-NEXT:   inputs: [[N]]
// CHECK-NEXT:   inputs: [[N]]
// CHECK-NEXT:   inputs: {{[0-9]+}}
// CHECK-NEXT:   inputs: {{[0-9]+}}
// CHECK-NEXT:   inputs: {{[0-9]+}}
// CHECK-NEXT:   outputs: [[C:[0-9]+]]
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "low_rank"
// CHECK-NEXT:     i: 1
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "cross"
// CHECK-NEXT: }
// CHECK-NEXT: instructions {
// CHECK-NEXT:   kernel: "dot_interaction"
// CHECK-NEXT:   inputs: [[C]]
// CHECK-NEXT:   inputs: 1
// CHECK-NEXT:   outputs: {{[0-9]+}}
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "num_features"
// CHECK-NEXT:     i: 2
// CHECK-NEXT:   }
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "self_interaction"
// CHECK-NEXT:     i: 0
// CHECK-NEXT:   }
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "pair_order"
// CHECK-NEXT:     s: "torchrec"
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "inter"
// CHECK-NEXT: }
// PyTorch's [N, K] weight, a run-time input: no constant, no bias.
// CHECK-NEXT: instructions {
// CHECK-NEXT:   kernel: "linear"
// CHECK-NEXT:   inputs: [[C]]
// CHECK-NEXT:   inputs: 2
// CHECK-NEXT:   outputs: {{[0-9]+}}
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "transpose_weight"
// CHECK-NEXT:     i: 1
// CHECK-NEXT:   }
// CHECK-NEXT:   attrs {
// CHECK-NEXT:     name: "activation"
// CHECK-NEXT:     s: "none"
// CHECK-NEXT:   }
// CHECK-NEXT:   name: "lin2"
// CHECK-NEXT: }

func.func @main(%x: tensor<?x4xf32> {onnx.name = "x"},
                %e: tensor<?x8xf32> {onnx.name = "e"},
                %wt: tensor<3x4xf32> {onnx.name = "wt"})
    -> (tensor<?x7xf32> {onnx.name = "r"}, tensor<?x3xf32> {onnx.name = "p"}) {
  %w = arith.constant dense<0.5> : tensor<4x4xf32>
  %b = arith.constant dense<0.25> : tensor<4xf32>
  %g = arith.constant dense<1.5> : tensor<4xf32>
  %v = arith.constant dense<0.125> : tensor<2x4xf32>
  %u = arith.constant dense<0.75> : tensor<4x2xf32>
  %cb = arith.constant dense<0.5> : tensor<4xf32>
  %h = ember.linear %x, %w, %b {activation = "relu", transpose_weight = false} : tensor<?x4xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<?x4xf32> loc("lin")
  %s = ember.softmax %h axis = 1 : tensor<?x4xf32> loc("sm")
  %n = ember.layer_norm %s scale(%g : tensor<4xf32>) axis = 1 epsilon = 1.0e-3 : tensor<?x4xf32> loc("ln")
  %c = ember.dcn_cross %n, %n weights(%v, %u : tensor<2x4xf32>, tensor<4x2xf32>) bias(%cb : tensor<4xf32>) : tensor<?x4xf32> loc("cross")
  %r = ember.dot_interaction %c, %e {num_features = 2 : i64, pair_order = "torchrec"} : tensor<?x4xf32>, tensor<?x8xf32> -> tensor<?x7xf32> loc("inter")
  %p = ember.linear %c, %wt : tensor<?x4xf32>, tensor<3x4xf32> -> tensor<?x3xf32> loc("lin2")
  return %r, %p : tensor<?x7xf32>, tensor<?x3xf32>
}
