// RUN: ember-opt %s -split-input-file -verify-diagnostics

// Every verifier error of #ember.group, #ember.shard and #ember.sharding,
// and the errors of the #ember.sharding parser.

// expected-error @+1 {{a group needs at least one rank}}
func.func @f() attributes {a = #ember.group<ranks = []>} {
  return
}

// -----

// expected-error @+1 {{group rank #1 is negative (-1)}}
func.func @f() attributes {a = #ember.group<ranks = [0, -1]>} {
  return
}

// -----

// expected-error @+1 {{rank 1 appears twice in the group (positions 0 and 2)}}
func.func @f() attributes {a = #ember.group<ranks = [1, 0, 1]>} {
  return
}

// -----

// expected-error @+1 {{ranks_per_node must be positive, got -2}}
func.func @f() attributes {a = #ember.group<ranks = [0, 1], ranks_per_node = -2>} {
  return
}

// -----

// expected-error @+1 {{shard offsets need one entry per table dimension (2), got 1}}
func.func @f() attributes {a = #ember.shard<offsets = [0], sizes = [10, 4], rank = 0>} {
  return
}

// -----

// expected-error @+1 {{shard sizes need one entry per table dimension (2), got 3}}
func.func @f() attributes {a = #ember.shard<offsets = [0, 0], sizes = [10, 4, 1], rank = 0>} {
  return
}

// -----

// expected-error @+1 {{shard offset of dimension 1 is negative (-4)}}
func.func @f() attributes {a = #ember.shard<offsets = [0, -4], sizes = [10, 4], rank = 0>} {
  return
}

// -----

// expected-error @+1 {{shard size of dimension 0 is negative (-10)}}
func.func @f() attributes {a = #ember.shard<offsets = [0, 0], sizes = [-10, 4], rank = 0>} {
  return
}

// -----

// expected-error @+1 {{shard rank is negative (-3)}}
func.func @f() attributes {a = #ember.shard<offsets = [0, 0], sizes = [10, 4], rank = -3>} {
  return
}

// -----

// expected-error @+1 {{shard device 'cuda:x' is not of the form "<type>" or "<type>:<index>" (e.g. "cuda:0")}}
func.func @f() attributes {a = #ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0, device = "cuda:x">} {
  return
}

// -----

// expected-error @+1 {{compute_kernel must not be empty}}
func.func @f() attributes {a = #ember.sharding<data_parallel, compute_kernel = "">} {
  return
}

// -----

// expected-error @+1 {{ranks_per_node must be positive, got -1}}
func.func @f() attributes {a = #ember.sharding<table_row_wise, ranks_per_node = -1, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{'ranks_per_node' is only used by table_row_wise, not row_wise}}
func.func @f() attributes {a = #ember.sharding<row_wise, ranks_per_node = 4, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{data_parallel replicates the table and takes no shards, got 1}}
func.func @f() attributes {a = #ember.sharding<data_parallel, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{data_parallel replica rank is negative (-1)}}
func.func @f() attributes {a = #ember.sharding<data_parallel, ranks = [0, -1]>} {
  return
}

// -----

// expected-error @+1 {{data_parallel lists rank 2 twice}}
func.func @f() attributes {a = #ember.sharding<data_parallel, ranks = [2, 2]>} {
  return
}

// -----

// expected-error @+1 {{data_parallel 'ranks' must not be empty (omit it to replicate on every rank)}}
func.func @f() attributes {a = #ember.sharding<data_parallel, ranks = []>} {
  return
}

// -----

// expected-error @+1 {{'ranks' lists the replicas of a data_parallel table; table_wise shards carry their own ranks}}
func.func @f() attributes {a = #ember.sharding<table_wise, ranks = [0], shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise needs at least one shard}}
func.func @f() attributes {a = #ember.sharding<row_wise>} {
  return
}

// -----

// expected-error @+1 {{table_wise places the whole table on one rank: expected 1 shard, got 2}}
func.func @f() attributes {a = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 0>, #ember.shard<offsets = [5, 0], sizes = [5, 4], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{table_wise shard must start at [0, 0], got [0, 4]}}
func.func @f() attributes {a = #ember.sharding<table_wise, shards = [#ember.shard<offsets = [0, 4], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise shard #0 starts at column 2; row-wise shards take full rows (column 0 on)}}
func.func @f() attributes {a = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 2], sizes = [10, 2], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise shard #1 has 2 columns but shard #0 has 4; row-wise shards take full rows}}
func.func @f() attributes {a = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 0>, #ember.shard<offsets = [5, 0], sizes = [5, 2], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise shard #0 starts at row 3 but the first shard must start at row 0}}
func.func @f() attributes {a = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [3, 0], sizes = [5, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise shard #1 starts at row 6 but shard #0 ends at row 5}}
func.func @f() attributes {a = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 0>, #ember.shard<offsets = [6, 0], sizes = [5, 4], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{row_wise places shards #0 and #1 on the same rank 1 (one shard per rank)}}
func.func @f() attributes {a = #ember.sharding<row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 1>, #ember.shard<offsets = [5, 0], sizes = [5, 4], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{table_row_wise needs 'ranks_per_node' to place its shards on one node}}
func.func @f() attributes {a = #ember.sharding<table_row_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 0>, #ember.shard<offsets = [5, 0], sizes = [5, 4], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{table_row_wise shard #1 is on rank 4 (node 1) but shard #0 is on rank 3 (node 0); its shards must share one node}}
func.func @f() attributes {a = #ember.sharding<table_row_wise, ranks_per_node = 4, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 3>, #ember.shard<offsets = [5, 0], sizes = [5, 4], rank = 4>]>} {
  return
}

// -----

// expected-error @+1 {{table_row_wise shard #1 starts at row 6 but shard #0 ends at row 5}}
func.func @f() attributes {a = #ember.sharding<table_row_wise, ranks_per_node = 4, shards = [#ember.shard<offsets = [0, 0], sizes = [5, 4], rank = 3>, #ember.shard<offsets = [6, 0], sizes = [5, 4], rank = 2>]>} {
  return
}

// -----

// expected-error @+1 {{column_wise shard #0 starts at row 1; column-wise shards take full columns (row 0 on)}}
func.func @f() attributes {a = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [1, 0], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{column_wise shard #1 has 8 rows but shard #0 has 10; column-wise shards take full columns}}
func.func @f() attributes {a = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>, #ember.shard<offsets = [0, 4], sizes = [8, 4], rank = 1>]>} {
  return
}

// -----

// expected-error @+1 {{column_wise shard #0 starts at column 4 but the first shard must start at column 0}}
func.func @f() attributes {a = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 4], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{column_wise shard #1 starts at column 2 but shard #0 ends at column 4}}
func.func @f() attributes {a = #ember.sharding<column_wise, shards = [#ember.shard<offsets = [0, 0], sizes = [10, 4], rank = 0>, #ember.shard<offsets = [0, 2], sizes = [10, 4], rank = 0>]>} {
  return
}

// -----

// expected-error @+1 {{unknown sharding type 'diagonal'; expected table_wise, row_wise, column_wise, table_row_wise or data_parallel}}
func.func @f() attributes {a = #ember.sharding<diagonal>} {
  return
}

// -----

// expected-error @+1 {{'ranks' is given twice}}
func.func @f() attributes {a = #ember.sharding<data_parallel, ranks = [0], ranks = [1]>} {
  return
}

// -----

// expected-error @+1 {{unknown key 'replicas' in #ember.sharding; expected shards, ranks, ranks_per_node or compute_kernel}}
func.func @f() attributes {a = #ember.sharding<data_parallel, replicas = [0]>} {
  return
}

// -----

// ember.table checks its sharding against its shape (verifyTableSharding).

// expected-error @+1 {{'ember.table' op table_wise shard must cover the whole 1000x64 table, got sizes [1000, 32]}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<table_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [1000, 32], rank = 0>]>}

// -----

// expected-error @+1 {{'ember.table' op row_wise shard #0 has 32 columns but the table has 64 (row-wise shards take full rows)}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [500, 32], rank = 0>,
    #ember.shard<offsets = [500, 0], sizes = [500, 32], rank = 1>]>}

// -----

// expected-error @+1 {{'ember.table' op column_wise shard #0 has 999 rows but the table has 1000 (column-wise shards take full columns)}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<column_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [999, 64], rank = 0>]>}

// -----

// expected-error @+1 {{'ember.table' op row_wise shard #1 (offsets [500, 0], sizes [600, 64]) lies outside the 1000x64 table}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>,
    #ember.shard<offsets = [500, 0], sizes = [600, 64], rank = 1>]>}

// -----

// expected-error @+1 {{'ember.table' op row_wise shards cover 32000 of the 64000 elements of the 1000x64 table; they must tile it without gaps}}
ember.table @t : !ember.table<1000x64, f32> {sharding = #ember.sharding<row_wise, shards = [
    #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>]>}

// -----

// expected-error @+1 {{shard ends past 9223372036854775807 in dimension 0}}
func.func @f() attributes {a = #ember.shard<offsets = [9223372036854775807, 0], sizes = [1, 4], rank = 0>} {
  return
}
