// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

// CHECK: ember.table @t_user : !ember.table<1000x64, f32>{{$}}
ember.table @t_user : !ember.table<1000x64, f32>
// CHECK: ember.table @t_init : !ember.table<4x2, f32> init = dense<5.000000e-01> : tensor<4x2xf32>
ember.table @t_init : !ember.table<4x2, f32> init = dense<0.5> : tensor<4x2xf32>
// CHECK: ember.table @t_ext : !ember.table<100x64, int8_rowwise> external("tables/t_ext.bin", 4096)
ember.table @t_ext : !ember.table<100x64, int8_rowwise> external("tables/t_ext.bin", 4096)
// CHECK: ember.table @t_q4 : !ember.table<2x4, int4_rowwise> init = dense<1> : tensor<2x10xi8>
ember.table @t_q4 : !ember.table<2x4, int4_rowwise> init = dense<1> : tensor<2x10xi8>
// CHECK: ember.table @t_tagged : !ember.table<8x4, f16> {note = "kept"}
ember.table @t_tagged : !ember.table<8x4, f16> {note = "kept"}
// CHECK: ember.table @t_rw : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>, #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>]>}
ember.table @t_rw : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>, #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>]>}

// CHECK-LABEL: func.func @refs
// CHECK: ember.table.ref @t_user : !ember.table<1000x64, f32>
// CHECK: ember.table.ref @t_ext : !ember.table<100x64, int8_rowwise>
func.func @refs() -> (!ember.table<1000x64, f32>, !ember.table<100x64, int8_rowwise>) {
  %a = ember.table.ref @t_user : !ember.table<1000x64, f32>
  %b = ember.table.ref @t_ext : !ember.table<100x64, int8_rowwise>
  return %a, %b : !ember.table<1000x64, f32>, !ember.table<100x64, int8_rowwise>
}

// CHECK-LABEL: func.func @from_tensor
// CHECK: ember.table.from_tensor %{{.*}} : tensor<1000x64xf32> -> !ember.table<1000x64, f32>
// CHECK: ember.table.from_tensor %{{.*}} : tensor<10x8xbf16> -> !ember.table<10x8, bf16>
// CHECK: ember.table.from_tensor %{{.*}} : tensor<10x72xi8> -> !ember.table<10x64, int8_rowwise>
// CHECK: ember.table.from_tensor %{{.*}} : tensor<10x40xi8> -> !ember.table<10x64, int4_rowwise>
func.func @from_tensor(%w: tensor<1000x64xf32>, %h: tensor<10x8xbf16>,
                       %q8: tensor<10x72xi8>, %q4: tensor<10x40xi8>) {
  %a = ember.table.from_tensor %w : tensor<1000x64xf32> -> !ember.table<1000x64, f32>
  %b = ember.table.from_tensor %h : tensor<10x8xbf16> -> !ember.table<10x8, bf16>
  %c = ember.table.from_tensor %q8 : tensor<10x72xi8> -> !ember.table<10x64, int8_rowwise>
  %d = ember.table.from_tensor %q4 : tensor<10x40xi8> -> !ember.table<10x64, int4_rowwise>
  return
}
