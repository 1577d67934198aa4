// The contract ember-partition reads (docs/sharding.md, "IR contract"): the
// module's world size, and a sharding on every lookup and table symbol; no
// lookup is left without one (the default prefix, over all chunks as one
// module).
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 sharding=table_wise" | FileCheck %s
// CHECK-LABEL: module attributes {ember.world_size = 2 : i64}
// CHECK: ember.table @t_user : {{.*}} {sharding = #ember.sharding<table_wise
// CHECK: ember.table @t_item : {{.*}} {sharding = #ember.sharding<table_wise
// CHECK-LABEL: func.func @collection
// CHECK: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<table_wise, {{.*}}>, #ember.sharding<table_wise, {{.*}}>]}
// CHECK-LABEL: func.func @shared
// CHECK: ember.embedding_bag {{.*}} {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 16], rank = {{[01]}}>]>}
// CHECK: ember.table @t_static : {{.*}} {sharding = #ember.sharding<table_wise
// CHECK-LABEL: func.func @static_kjt
// CHECK: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<table_wise
// CHECK-LABEL: func.func @single_bag
// CHECK: ember.embedding_bag {{.*}} {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = {{[01]}}>]>}
// CHECK-NOT: ember.embedding_bag{{[^{]*}}: !ember.table
//
// Forced kinds, chunk by chunk.
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="world-size=2 sharding=table_wise" | FileCheck %s --check-prefix=TW
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="world-size=4 sharding=row_wise" | FileCheck %s --check-prefix=RW
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="world-size=2 sharding=column_wise" | FileCheck %s --check-prefix=CW
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="world-size=2 sharding=data_parallel" | FileCheck %s --check-prefix=DP
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="world-size=4 ranks-per-node=2 sharding=table_row_wise" | FileCheck %s --check-prefix=TWRW
// The planner's own choice: every table gets a sharding.
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="topology-file=%S/Inputs/plan-sharding-topology.json" | ember-opt -split-input-file | FileCheck %s --check-prefix=AUTO
//
// Without -split-input-file the chunks form one module (distinct names).
// Per-table overrides and pinned ranks:
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 table-sharding=t_user=column_wise@1/0,t_item=table_wise@1,emb0=data_parallel@1" | FileCheck %s --check-prefix=PIN
// Import a plan (t_user), plan the rest; export the plan and the report:
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 plan-file=%S/Inputs/plan-sharding-import.json export-file=%t.json report-file=%t.txt" | FileCheck %s --check-prefix=IMPORT
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: FileCheck %s --check-prefix=REPORT < %t.txt
// The exported plan imports back to the same attributes:
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 plan-file=%t.json" | FileCheck %s --check-prefix=IMPORT
//
// Errors: the pass fails, names the problem, and writes no file.
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 table-sharding=t_ghost=row_wise" 2>&1 | FileCheck %s --check-prefix=GHOST
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 table-sharding=t_item=row_wise" 2>&1 | FileCheck %s --check-prefix=MAXRW
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 plan-file=%S/Inputs/plan-sharding-bad.json" 2>&1 | FileCheck %s --check-prefix=BADJSON
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 stats-file=%S/Inputs/plan-sharding-stats.json" 2>&1 | FileCheck %s --check-prefix=BADSTATS
// RUN: rm -f %t.infeasible.json
// RUN: not ember-opt %s --ember-plan-sharding="world-size=2 topology-file=%S/Inputs/plan-sharding-tiny-topology.json export-file=%t.infeasible.json" 2>&1 | FileCheck %s --check-prefix=INFEASIBLE
// RUN: not test -e %t.infeasible.json
// RUN: not ember-opt %s --ember-plan-sharding="sharding=sideways" 2>&1 | FileCheck %s --check-prefix=BADKIND
// RUN: rm -f %t.half.json
// RUN: not ember-opt %s --ember-plan-sharding="export-file=%t.half.json report-file=%t.no/such/dir/report.txt" 2>&1 | FileCheck %s --check-prefix=NOREPORT
// RUN: not test -e %t.half.json
// Pooling factors from static shapes, and from a statistics file:
// RUN: ember-opt %s -split-input-file --ember-plan-sharding="report-file=-" | FileCheck %s --check-prefix=FACTORS
// RUN: ember-opt %s --ember-plan-sharding="report-file=- stats-file=%S/Inputs/plan-sharding-stats-good.json" | FileCheck %s --check-prefix=STATS
// RUN: ember-opt %s --ember-plan-sharding="world-size=2 sharding=row_wise" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: ember-opt %s --ember-group-tables | not ember-opt --ember-plan-sharding 2>&1 | FileCheck %s --check-prefix=GROUPED

// GHOST: error: ember-plan-sharding: a constraint names table 't_ghost', which the model does not have
// MAXRW: error: ember-plan-sharding: table 't_item' cannot be row_wise: row_wise adds up partial bags from several ranks, which is only right for sum and mean pooling; the table pools with max
// BADJSON: error: ember-plan-sharding: {{.*}}plan-sharding-bad.json: the plan is not valid JSON
// BADSTATS: error: ember-plan-sharding: {{.*}}plan-sharding-stats.json: statistics: unknown feature 'no_such_feature'
// INFEASIBLE: error: ember-plan-sharding: no sharding fits the memory of the 2 ranks
// INFEASIBLE-DAG: t_user ({{.*}}): {{device|host}} memory short by
// INFEASIBLE-DAG: t_item ({{.*}}): {{device|host}} memory short by
// BADKIND: error: ember-plan-sharding: unknown sharding 'sideways'
// ids/sample is the sum over the table's features (t_user: "user" and the
// bag of @shared; t_static: "a" and "b", 10 ids in 4 bags each).
// FACTORS: ids/sample
// FACTORS: t_user 1000x16 f32 sum 2.0
// FACTORS: t_item 500x8 f32 max 1.0
// FACTORS: t_static 100x4 f32 sum 5.0
// FACTORS: emb0 10x4 f32 max 2.0
// STATS: t_user 1000x16 f32 sum 41.0
// STATS: t_static 100x4 f32 sum 6.0
// NOTE: warning: ember-plan-sharding: table 't_item' is not row_wise (row_wise adds up partial bags from several ranks, which is only right for sum and mean pooling; the table pools with max); the planner chose among the kinds it allows
// NOTE: warning: ember-plan-sharding: table 'emb0' is not row_wise
// NOREPORT: error: ember-plan-sharding: cannot write the report to
// GROUPED: error: ember-plan-sharding runs before ember-group-tables

// A collection over two table symbols.
// TW-LABEL: module attributes {ember.world_size = 2 : i64}
// TW-DAG: ember.table @t_user : !ember.table<1000x16, f32> {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 16], rank = [[USER:[01]]]>]>}
// TW-DAG: ember.table @t_item : !ember.table<500x8, f32> {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 8], rank = [[ITEM:[01]]]>]>}
// TW: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 16], rank = [[USER]]>]>, #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 8], rank = [[ITEM]]>]>]}
// The same table read by a second op gets the same sharding.
// TW: ember.embedding_bag {{.*}} {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 16], rank = [[USER]]>]>}

// RW-LABEL: module attributes {ember.world_size = 4 : i64}
// RW-DAG: ember.table @t_user : {{.*}} {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [250, 16], rank = 0>, #ember.shard<offsets = [250, 0], sizes = [250, 16], rank = 1>, #ember.shard<offsets = [500, 0], sizes = [250, 16], rank = 2>, #ember.shard<offsets = [750, 0], sizes = [250, 16], rank = 3>]>}
// t_item pools with max: not row_wise.
// RW-DAG: ember.table @t_item : {{.*}} {sharding = #ember.sharding<{{table_wise|column_wise|data_parallel}}
// RW: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<row_wise
// RW: ember.embedding_bag {{.*}} {ember.sharding = #ember.sharding<row_wise

// CW-LABEL: module attributes {ember.world_size = 2 : i64}
// CW-DAG: ember.table @t_user : {{.*}} {sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 8], rank = {{[01]}}>, #ember.shard<offsets = [0, 8], sizes = [1000, 8], rank = {{[01]}}>]>}
// CW-DAG: ember.table @t_item : {{.*}} {sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 4], rank = {{[01]}}>, #ember.shard<offsets = [0, 4], sizes = [500, 4], rank = {{[01]}}>]>}

// DP-LABEL: module attributes {ember.world_size = 2 : i64}
// DP-DAG: ember.table @t_user : {{.*}} {sharding = #ember.sharding<data_parallel, compute_kernel = "dense">}
// DP: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<data_parallel, compute_kernel = "dense">, #ember.sharding<data_parallel, compute_kernel = "dense">]}

// TWRW-LABEL: module attributes {ember.world_size = 4 : i64}
// TWRW-DAG: ember.table @t_user : {{.*}} {sharding = #ember.sharding<table_row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 16], rank = [[R0:[0-9]]]>, #ember.shard<offsets = [500, 0], sizes = [500, 16], rank = {{[0-9]}}>], ranks_per_node = 2>}

// AUTO-LABEL: module attributes {ember.world_size = 4 : i64}
// AUTO-DAG: ember.table @t_user : {{.*}} {sharding = #ember.sharding<
// AUTO-DAG: ember.table @t_item : {{.*}} {sharding = #ember.sharding<
// AUTO: ember.embedding_bag_collection {{.*}} {ember.sharding = [#ember.sharding<{{.*}}>, #ember.sharding<{{.*}}>]}

// PIN: ember.table @t_user : {{.*}} {sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [1000, 8], rank = 1>, #ember.shard<offsets = [0, 8], sizes = [1000, 8], rank = 0>]>}
// PIN: ember.table @t_item : {{.*}} {sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [500, 8], rank = 1>]>}
// PIN: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<data_parallel, ranks = [1], compute_kernel = "dense">}

// IMPORT: ember.table @t_user : {{.*}} {sharding = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [600, 16], rank = 1>, #ember.shard<offsets = [600, 0], sizes = [400, 16], rank = 0>]>}
// JSON: "emb0": {
// JSON: "t_item": {
// JSON: "t_user": {
// JSON: "compute_kernel": "fused",
// JSON: "ranks": [
// JSON-NEXT: 1,
// JSON-NEXT: 0
// JSON-NEXT: ],
// JSON: "placement": "rank:1/cuda:1",
// JSON: "shard_offsets": [
// JSON-NEXT: 0,
// JSON-NEXT: 0
// JSON: "shard_sizes": [
// JSON-NEXT: 600,
// JSON-NEXT: 16
// JSON: "sharding_type": "row_wise"
// REPORT: Sharding plan: 2 rank(s), 8 per node, batch 512 per rank
// REPORT: t_user {{.*}} row_wise {{.*}} [1, 0]
// REPORT: Per rank

ember.table @t_user : !ember.table<1000x16, f32>
ember.table @t_item : !ember.table<500x8, f32>

func.func @collection(%ids: tensor<?xi64>, %lengths: tensor<?xi32>)
    -> !ember.keyed_tensor<["user" : 16, "item" : 8], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<?xi64>) lengths(%lengths : tensor<?xi32>)
      -> !ember.kjt<["user", "item"], values = i64, lengths = i32>
  %t_user = ember.table.ref @t_user : !ember.table<1000x16, f32>
  %t_item = ember.table.ref @t_item : !ember.table<500x8, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t_user, %t_item)
      feature_tables = [0, 1] pooling = [sum, max]
      : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
        !ember.table<1000x16, f32>, !ember.table<500x8, f32>
      -> !ember.keyed_tensor<["user" : 16, "item" : 8], f32>
  return %pooled : !ember.keyed_tensor<["user" : 16, "item" : 8], f32>
}

func.func @shared(%ids: tensor<?xi64>, %offsets: tensor<?xi64>) -> tensor<?x16xf32> {
  %t = ember.table.ref @t_user : !ember.table<1000x16, f32>
  %r = ember.embedding_bag %t[%ids, %offsets] pooling = sum
      : !ember.table<1000x16, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// A KJT of static shape: 10 ids in 4 bags.
ember.table @t_static : !ember.table<100x4, f32>
func.func @static_kjt(%ids: tensor<10xi64>, %lengths: tensor<4xi32>)
    -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32> {
  %kjt = ember.kjt.create values(%ids : tensor<10xi64>) lengths(%lengths : tensor<4xi32>)
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
  %t = ember.table.ref @t_static : !ember.table<100x4, f32>
  %pooled = ember.embedding_bag_collection %kjt tables(%t)
      feature_tables = [0, 0] pooling = [sum]
      : !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.table<100x4, f32>
      -> !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
  return %pooled : !ember.keyed_tensor<["a" : 4, "b" : 4], f32>
}

// -----

// A bag over a table made from a tensor: named after its location.
// TW: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = {{[01]}}>]>}
// RW: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<{{table_wise|column_wise|data_parallel}}
// CW: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = {{[01]}}>]>}
// DP: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<data_parallel, compute_kernel = "dense">}
// AUTO: ember.embedding_bag {{.*}} pooling = max {ember.sharding = #ember.sharding<
func.func @single_bag(%w: tensor<10x4xf32>, %ids: tensor<6xi64>, %offsets: tensor<3xi64>)
    -> tensor<3x4xf32> {
  %t = ember.table.from_tensor %w : tensor<10x4xf32> -> !ember.table<10x4, f32>
  %r = ember.embedding_bag %t[%ids, %offsets] pooling = max
      : !ember.table<10x4, f32>, tensor<6xi64>, tensor<3xi64> -> tensor<3x4xf32> loc("emb0")
  return %r : tensor<3x4xf32>
}
