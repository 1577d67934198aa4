// The planner's objective (inference or training) and memory reservation
// (Ember's or TorchRec's), as pass options and as ember-compile flags
// (docs/sharding.md, "User control").
//
// Inference: a replica of t_big (256 MB, 50 ids a sample) looks up only its
// rank's batch, so both tables are replicated. Training adds the gradient
// all-reduce of a replica (2 x 15/16 x 256 MB over the 50 GB/s network):
// t_big is sharded instead.
// RUN: ember-opt %s --ember-plan-sharding="world-size=16 stats-file=%S/Inputs/plan-sharding-objective-stats.json export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-INFERENCE
// RUN: ember-opt %s --ember-plan-sharding="world-size=16 stats-file=%S/Inputs/plan-sharding-objective-stats.json objective=inference export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-INFERENCE
// RUN: ember-opt %s --ember-plan-sharding="world-size=16 stats-file=%S/Inputs/plan-sharding-objective-stats.json objective=training export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-TRAINING
// include-backward is the training objective's older name.
// RUN: ember-opt %s --ember-plan-sharding="world-size=16 stats-file=%S/Inputs/plan-sharding-objective-stats.json include-backward=true export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-TRAINING
// RUN: ember-compile %s -o - --emit sharding-plan --world-size 16 --sharding-stats %S/Inputs/plan-sharding-objective-stats.json --objective training | FileCheck %s --check-prefix=CHECK-TRAINING
// The report says which objective and how much memory is reserved.
// RUN: ember-compile %s -o - --emit sharding-report --world-size 16 --sharding-stats %S/Inputs/plan-sharding-objective-stats.json --objective training --memory-reservation torchrec | FileCheck %s --check-prefix=CHECK-REPORT
// RUN: ember-compile %s -o - --emit sharding-report --world-size 16 --sharding-stats %S/Inputs/plan-sharding-objective-stats.json | FileCheck %s --check-prefix=CHECK-REPORT-DEFAULT
// training-lean: the inference plan's replicas sharded within its bytes; the
// report says so, and how many.
// RUN: ember-compile %s -o - --emit sharding-report --world-size 16 --sharding-stats %S/Inputs/plan-sharding-objective-stats.json --objective training-lean | FileCheck %s --check-prefix=CHECK-REPORT-LEAN
// RUN: ember-compile %s -o - --emit sharding-report --world-size 16 --sharding-stats %S/Inputs/plan-sharding-objective-stats.json --objective training-lean --lean-slack 0.5 | FileCheck %s --check-prefix=CHECK-REPORT-SLACK
// lean-slack: only with training-lean, a finite fraction of at least 0.
// RUN: not ember-opt %s --ember-plan-sharding="lean-slack=0.5" 2>&1 | FileCheck %s --check-prefix=CHECK-SLACK-OBJECTIVE
// RUN: not ember-opt %s --ember-plan-sharding="objective=training-lean lean-slack=-3" 2>&1 | FileCheck %s --check-prefix=CHECK-SLACK-NEGATIVE
// RUN: not ember-opt %s --ember-plan-sharding="objective=training-lean lean-slack=nan" 2>&1 | FileCheck %s --check-prefix=CHECK-SLACK-NAN
// RUN: not ember-opt %s --ember-plan-sharding="objective=training-lean lean-slack=abc" 2>&1 | FileCheck %s --check-prefix=CHECK-SLACK-TEXT
//
// TorchRec's reservation (15% and 20 copies of the input ids) leaves 250 MB
// of a 300 MB device: t_big (256 MB) no longer fits it and is cached from
// host memory; Ember's (10%) leaves 270 MB.
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 sharding=table_wise topology-file=%S/Inputs/plan-sharding-small-device.json stats-file=%S/Inputs/plan-sharding-objective-stats.json export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-EMBER-MEMORY
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 sharding=table_wise topology-file=%S/Inputs/plan-sharding-small-device.json stats-file=%S/Inputs/plan-sharding-objective-stats.json memory-reservation=torchrec export-file=-" -o /dev/null | FileCheck %s --check-prefix=CHECK-TORCHREC-MEMORY
//
// Errors.
// RUN: not ember-opt %s --ember-plan-sharding="objective=fastest" 2>&1 | FileCheck %s --check-prefix=CHECK-BAD-OBJECTIVE
// RUN: not ember-opt %s --ember-plan-sharding="objective=inference include-backward=true" 2>&1 | FileCheck %s --check-prefix=CHECK-CONTRADICTION
// RUN: not ember-opt %s --ember-plan-sharding="memory-reservation=some" 2>&1 | FileCheck %s --check-prefix=CHECK-BAD-RESERVATION
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 topology-file=%S/Inputs/plan-sharding-tiny-device.json stats-file=%S/Inputs/plan-sharding-objective-stats.json memory-reservation=torchrec" 2>&1 | FileCheck %s --check-prefix=CHECK-ALL-RESERVED
// RUN: rm -f %t.plan
// RUN: not ember-compile %s -o %t.plan --world-size 2 --objective fastest 2>&1 | FileCheck %s --check-prefix=CHECK-CLI-OBJECTIVE
// RUN: not ember-compile %s -o %t.plan --world-size 2 --memory-reservation some 2>&1 | FileCheck %s --check-prefix=CHECK-CLI-RESERVATION
// RUN: not ember-compile %s -o %t.plan --world-size 2 --objective training --lean-slack 0.1 2>&1 | FileCheck %s --check-prefix=CHECK-SLACK-OBJECTIVE
// RUN: not test -e %t.plan

// CHECK-INFERENCE: "t_big": {
// CHECK-INFERENCE: "sharding_type": "data_parallel"
// CHECK-TRAINING: "t_big": {
// CHECK-TRAINING-NOT: data_parallel
// CHECK-TRAINING: "sharding_type": "{{table_wise|row_wise|column_wise|table_row_wise}}"
// CHECK-REPORT: Objective: training: {{.*}}forward and backward
// CHECK-REPORT: device 80.0 GB (15.0% reserved by TorchRec's rule: 15% and 20 copies of the input ids)
// CHECK-REPORT-DEFAULT: Objective: inference: {{.*}}forward only
// CHECK-REPORT-LEAN: Objective: training-lean (within the inference plan's bytes): {{.*}}forward and backward
// CHECK-REPORT-LEAN: training-lean: {{[0-9]+}} of the inference plan's {{[0-9]+}} replicas sharded, costliest gradient all-reduce first; training score {{.*}} more than 5.0% above the inference plan's busiest
// CHECK-REPORT-SLACK: more than 50.0% above the inference plan's busiest
// CHECK-SLACK-OBJECTIVE: lean-slack applies to objective 'training-lean' only
// CHECK-SLACK-NAN: error: ember-plan-sharding: lean-slack must be a finite fraction of at least 0 (0.05: 5%), not nan
// CHECK-SLACK-TEXT: for the --lean-slack option: 'abc' value invalid for floating point argument
// CHECK-SLACK-NEGATIVE: error: ember-plan-sharding: lean-slack must be a finite fraction of at least 0 (0.05: 5%), not -3.00
// CHECK-REPORT-DEFAULT: device 80.0 GB (10.0% reserved),
// CHECK-EMBER-MEMORY: "t_big": {
// CHECK-EMBER-MEMORY-NEXT: "compute_kernel": "fused",
// CHECK-TORCHREC-MEMORY: "t_big": {
// CHECK-TORCHREC-MEMORY-NEXT: "compute_kernel": "fused_uvm_caching",
// CHECK-BAD-OBJECTIVE: error: ember-plan-sharding: unknown objective 'fastest' (expected inference, training or training-lean)
// CHECK-CONTRADICTION: error: ember-plan-sharding: objective 'inference' contradicts include-backward (the training objective)
// CHECK-BAD-RESERVATION: error: ember-plan-sharding: unknown memory reservation 'some' (expected ember or torchrec)
// CHECK-ALL-RESERVED: error: ember-plan-sharding: TorchRec's memory reservation (15% of device memory and 20 copies of the input ids) takes all of the 1000000 bytes of device memory
// CHECK-CLI-OBJECTIVE: ember-compile: --objective must be inference, training or training-lean, not 'fastest'
// CHECK-CLI-RESERVATION: ember-compile: --memory-reservation must be ember or torchrec, not 'some'

ember.table @t_big : !ember.table<1000000x64, f32>
ember.table @t_small : !ember.table<1000x16, f32>

func.func @collection(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["big" : 64, "small" : 16], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["big", "small"], values = i64, lengths = i32>
  %t_big = ember.table.ref @t_big : !ember.table<1000000x64, f32>
  %t_small = ember.table.ref @t_small : !ember.table<1000x16, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t_big, %t_small)
      feature_tables = [0, 1] pooling = [sum, sum]
      : !ember.kjt<["big", "small"], values = i64, lengths = i32>,
        !ember.table<1000000x64, f32>, !ember.table<1000x16, f32>
      -> !ember.keyed_tensor<["big" : 64, "small" : 16], f32>
  return %pooled : !ember.keyed_tensor<["big" : 64, "small" : 16], f32>
}
