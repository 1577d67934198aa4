// A partitioned program's ops in the plan's text form
// (compiler/plan/PlanCollectiveOps.cpp, PlanOutput.cpp, PlanStreams.cpp):
// two ranks, table-wise. Each rank's bags become one KJT (kjt_from_bags),
// sent by kjt_all_to_all (collective 0), looked up in the rank's own table,
// and the pooled rows come back by pooled_all_to_all (collective 1), their
// columns in the features' order: the concat reads its result whole (no
// per-feature slices, ember-simplify-slices after the partitioning). The collectives are plan-wide descriptors that both ranks'
// k-th collective instruction names; with --comm-stream they run on stream 1
// between events, and the compute that reads their results waits.

// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - --world-size 2 --sharding table_wise --comm-stream=true | FileCheck %s
// RUN: ember-compile %s --emit plan-text --no-memory-plan -o - --world-size 2 --sharding table_wise --comm-stream=false | FileCheck %s --check-prefix=CHECK-NOSTREAM

// CHECK:      plan target cpu, world size 2
// CHECK:      collective 0: kjt_all_to_all ranks [0, 1]
// CHECK-NEXT: collective 1: all_to_all ranks [0, 1]
// CHECK-NEXT: rank 0: {{[0-9]+}} slots, 2 streams, 4 events
// CHECK:        const %[[T0:[0-9]+]] "{{.*}}": f32[10, 4] (160 bytes)
// CHECK:        %[[KV:[0-9]+]]: i64[{{d[0-9]+}}], %[[KL:[0-9]+]]: i64[{{d[0-9]+}}] = kjt_from_bags({{.*}}) {include_last_offset = [1, 1], lengths_dtype = "int64", num_rows = [10, 8], feature_names = ["a", "b"]} record [0]
// CHECK-NEXT:   %[[RL:[0-9]+]]: i64[{{d[0-9]+}}], %[[RV:[0-9]+]]: i64[{{d[0-9]+}}] = kjt_all_to_all(%[[KL]], %[[KV]], -) {key_splits = [1, 1]} collective 0 stream 1 wait [0] record [1]
// CHECK-NEXT:   %[[P:[0-9]+]]: f32[[[N:d[0-9]+]], 4] = grouped_embedding_bag(%[[RV]], %[[RL]], -, %[[T0]]) {{{.*}}feature_names = ["t0"]} wait [1]
// CHECK-NEXT:   %[[PI:[0-9]+]]: f32[[[N]], 4] = identity(%[[P]]) record [2]
// CHECK-NEXT:   %[[BACK:[0-9]+]]: f32[[[B:d[0-9]+]], 6] = pooled_all_to_all(%[[PI]], %[[KL]]) {batch_ref_divisor = 2, dim_per_rank = [4, 2]} collective 1 stream 1 wait [2] record [3]
// CHECK-NEXT:   %[[OUT:[0-9]+]]: f32[[[B]], 10] = concat(%[[BACK]], %{{[0-9]+}}) {axis = 1} wait [3]
// CHECK-NEXT:   output "out" = %[[OUT]]
// CHECK-NEXT: rank 1: {{[0-9]+}} slots, 2 streams, 4 events
// CHECK:        const %{{[0-9]+}} "{{.*}}": f32[8, 2] (64 bytes)
// CHECK:        kjt_all_to_all({{.*}}) {key_splits = [1, 1]} collective 0 stream 1
// CHECK:        grouped_embedding_bag({{.*}}feature_names = ["t1"]}
// CHECK:        pooled_all_to_all({{.*}}) {batch_ref_divisor = 2, dim_per_rank = [4, 2]} collective 1 stream 1

// Without the communication stream: program order, no streams or events.
// CHECK-NOSTREAM:     rank 0: {{[0-9]+}} slots{{$}}
// CHECK-NOSTREAM-NOT: stream
// CHECK-NOSTREAM:     kjt_all_to_all({{.*}}) {key_splits = [1, 1]} collective 0{{  }}
// CHECK-NOSTREAM-NOT: stream
// CHECK-NOSTREAM:     pooled_all_to_all({{.*}} collective 1{{  }}
!ab = !ember.kjt<["a", "b"], values = i64, lengths = i32>
module {
  func.func @main(%k: !ab {onnx.name = "features"}, %dense: tensor<?x4xf32> {onnx.name = "dense", onnx.dim_params = ["B", ""]})
      -> (tensor<?x10xf32> {onnx.name = "out"}) {
    %w0 = arith.constant dense<1.0> : tensor<10x4xf32> loc("ta")
    %w1 = arith.constant dense<2.0> : tensor<8x2xf32> loc("tb")
    %t0 = ember.table.from_tensor %w0 : tensor<10x4xf32> -> !ember.table<10x4, f32>
    %t1 = ember.table.from_tensor %w1 : tensor<8x2xf32> -> !ember.table<8x2, f32>
    %kt = ember.embedding_bag_collection %k tables(%t0, %t1) feature_tables = [0, 1] pooling = [sum, sum]
        : !ab, !ember.table<10x4, f32>, !ember.table<8x2, f32> -> !ember.keyed_tensor<["a" : 4, "b" : 2], f32> loc("ebc")
    %v = ember.keyed_tensor.values %kt : !ember.keyed_tensor<["a" : 4, "b" : 2], f32> -> tensor<?x6xf32> loc("values")
    %cat = tosa.concat %v, %dense {axis = 1 : i32} : (tensor<?x6xf32>, tensor<?x4xf32>) -> tensor<?x10xf32> loc("cat")
    return %cat : tensor<?x10xf32>
  }
}
