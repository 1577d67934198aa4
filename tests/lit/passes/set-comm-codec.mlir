// RUN: ember-opt %s --ember-set-comm-codec="codec=fp16" | FileCheck %s --check-prefix=CHECK-FP16
// RUN: ember-opt %s --ember-set-comm-codec="codec=bf16" | FileCheck %s --check-prefix=CHECK-BF16
// RUN: ember-opt %s --ember-set-comm-codec="codec=none" | FileCheck %s --check-prefix=CHECK-NONE
// RUN: not ember-opt %s --ember-set-comm-codec="codec=fp8" 2>&1 | FileCheck %s --check-prefix=CHECK-BAD

// The float32 payloads of pooled all-to-all, reduce-scatter and all-reduce
// between two or more ranks get the codec; integer payloads and groups of
// one rank (nothing travels) keep none; codec=none clears every codec.

// CHECK-FP16-LABEL: func.func @collectives
// CHECK-FP16: ember.pooled_all_to_all %{{.*}} group<ranks = [0, 1]> codec fp16 : tensor<8x16xf32>
// CHECK-FP16: ember.pooled_all_to_all %{{.*}} group<ranks = [0]> : tensor<8x16xf32>
// CHECK-FP16: ember.reduce_scatter sum %{{.*}} group<ranks = [0, 1]> codec fp16 : tensor<8x64xf32>
// CHECK-FP16: ember.reduce_scatter max %{{.*}} group<ranks = [0, 1]> : tensor<8x64xi32>
// CHECK-FP16: ember.all_reduce sum %{{.*}} group<ranks = [0, 1]> codec fp16 : tensor<4x8xf32>
// CHECK-BF16-LABEL: func.func @collectives
// CHECK-BF16: ember.pooled_all_to_all %{{.*}} group<ranks = [0, 1]> codec bf16
// CHECK-BF16: ember.reduce_scatter sum %{{.*}} group<ranks = [0, 1]> codec bf16
// CHECK-BF16: ember.all_reduce sum %{{.*}} group<ranks = [0, 1]> codec bf16
// CHECK-NONE-LABEL: func.func @collectives
// CHECK-NONE-NOT: codec
// CHECK-BAD: error: ember-set-comm-codec: codec must be none, fp16 or bf16, not 'fp8'
func.func @collectives(%x: tensor<8x16xf32>, %s: tensor<8x64xf32>,
                       %i: tensor<8x64xi32>, %r: tensor<4x8xf32>)
    -> (tensor<4x32xf32>, tensor<8x16xf32>, tensor<4x64xf32>,
        tensor<4x64xi32>, tensor<4x8xf32>) {
  %a = ember.pooled_all_to_all %x dim_per_rank [16, 16] group<ranks = [0, 1]> codec bf16
      : tensor<8x16xf32> -> !ember.awaitable<tensor<4x32xf32>>
  %b = ember.pooled_all_to_all %x dim_per_rank [16] group<ranks = [0]>
      : tensor<8x16xf32> -> !ember.awaitable<tensor<8x16xf32>>
  %c = ember.reduce_scatter sum %s group<ranks = [0, 1]>
      : tensor<8x64xf32> -> !ember.awaitable<tensor<4x64xf32>>
  %d = ember.reduce_scatter max %i group<ranks = [0, 1]>
      : tensor<8x64xi32> -> !ember.awaitable<tensor<4x64xi32>>
  %e = ember.all_reduce sum %r group<ranks = [0, 1]>
      : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
  %0 = ember.wait %a : !ember.awaitable<tensor<4x32xf32>>
  %1 = ember.wait %b : !ember.awaitable<tensor<8x16xf32>>
  %2 = ember.wait %c : !ember.awaitable<tensor<4x64xf32>>
  %3 = ember.wait %d : !ember.awaitable<tensor<4x64xi32>>
  %4 = ember.wait %e : !ember.awaitable<tensor<4x8xf32>>
  return %0, %1, %2, %3, %4 : tensor<4x32xf32>, tensor<8x16xf32>,
      tensor<4x64xf32>, tensor<4x64xi32>, tensor<4x8xf32>
}
