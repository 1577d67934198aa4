//===- EmberShardingAttrs.td - sharding and process groups ---*- tablegen -*-===//
//
// Process groups (the ranks a collective runs over, with their node layout)
// and the sharding of an embedding table over ranks, in the shape of
// TorchRec's ParameterSharding.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_ATTRS_TD
#define EMBER_SHARDING_ATTRS_TD

include "dialects/ember/EmberDialect.td"
include "dialects/ember/EmberAttrs.td"

//===----------------------------------------------------------------------===//
// GroupAttr
//===----------------------------------------------------------------------===//

def Ember_GroupAttr : Ember_Attr<"Group", "group"> {
  let summary = "a process group: the ranks a collective runs over";
  let description = [{
    The ranks of a collective, in the order of their position in the group
    (position `i` of the group sends/receives split `i` of a collective), and
    optionally the device grid they live on: `ranks_per_node` ranks per host,
    global rank `r` on node `r / ranks_per_node`.

    ```mlir
    #ember.group<ranks = [0, 1, 2, 3]>
    #ember.group<ranks = [0, 1, 2, 3, 4, 5, 6, 7], ranks_per_node = 4>
    ```

    Ranks must be non-empty, non-negative and unique; `ranks_per_node`, when
    present, must be positive.

    Inside a collective op the group is written without its `#ember.group`
    prefix, after the keyword `group`:
    `ember.all_reduce sum %x group<ranks = [0, 1]> : ...`.
  }];
  let parameters = (ins "::mlir::DenseI64ArrayAttr":$ranks,
                        DefaultValuedParameter<"int64_t", "0",
                            "ranks per node (0: not known)">:$ranks_per_node);
  let assemblyFormat = [{
    `<` `ranks` `=` $ranks (`,` `ranks_per_node` `=` $ranks_per_node^)? `>`
  }];
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$ranks,
                     CArg<"int64_t", "0">:$ranksPerNode), [{
      return $_get($_ctxt, ::mlir::DenseI64ArrayAttr::get($_ctxt, ranks),
                   ranksPerNode);
    }]>
  ];
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    /// Number of ranks in the group (the world size of its collectives).
    int64_t getSize() const { return getRanks().size(); }
    /// The ranks as a plain list.
    ::llvm::ArrayRef<int64_t> getRankList() const {
      return getRanks().asArrayRef();
    }
    /// Position of global rank `rank` in the group, if it is a member.
    std::optional<int64_t> getPosition(int64_t rank) const;
    /// Node of global rank `rank`, if ranks_per_node is known.
    std::optional<int64_t> getNodeOf(int64_t rank) const;
  }];
}

//===----------------------------------------------------------------------===//
// ShardAttr
//===----------------------------------------------------------------------===//

def Ember_ShardAttr : Ember_Attr<"Shard", "shard"> {
  let summary = "one shard of a table: a block of rows x columns on one rank";
  let description = [{
    TorchRec's `ShardMetadata`: the block `[offsets[0], offsets[0] + sizes[0])
    x [offsets[1], offsets[1] + sizes[1])` of the table lives on `rank`. The
    optional `device` completes TorchRec's placement string
    `"rank:<rank>/<device>"` (for example `"cuda:0"`); without it the runtime
    places the shard on the rank's own device.

    ```mlir
    #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>
    #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1, device = "cuda:1">
    ```

    Offsets and sizes have one entry per table dimension (two); offsets and
    sizes are non-negative, the rank too.
  }];
  let parameters = (ins "::mlir::DenseI64ArrayAttr":$offsets,
                        "::mlir::DenseI64ArrayAttr":$sizes,
                        "int64_t":$rank,
                        StringRefParameter<"placement device, e.g. \"cuda:0\"",
                                           "\"\"">:$device);
  let assemblyFormat = [{
    `<` `offsets` `=` $offsets `,` `sizes` `=` $sizes `,` `rank` `=` $rank
        (`,` `device` `=` $device^)? `>`
  }];
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$offsets,
                     "::llvm::ArrayRef<int64_t>":$sizes, "int64_t":$rank,
                     CArg<"::llvm::StringRef", "\"\"">:$device), [{
      return $_get($_ctxt, ::mlir::DenseI64ArrayAttr::get($_ctxt, offsets),
                   ::mlir::DenseI64ArrayAttr::get($_ctxt, sizes), rank, device);
    }]>
  ];
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    int64_t getRowOffset() const { return getOffsets()[0]; }
    int64_t getColumnOffset() const { return getOffsets()[1]; }
    int64_t getNumRows() const { return getSizes()[0]; }
    int64_t getNumColumns() const { return getSizes()[1]; }
    /// TorchRec's placement string "rank:<rank>/<device>". Without a device,
    /// the shard's rank's own GPU: "cuda:<rank % ranksPerNode>" (or
    /// "cuda:<rank>" when ranksPerNode is 0, i.e. one node).
    std::string getPlacement(int64_t ranksPerNode = 0) const;
  }];
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

def Ember_ShardingAttr : Ember_Attr<"Sharding", "sharding"> {
  let summary = "how an embedding table is split over ranks";
  let description = [{
    The sharding of one table, field for field TorchRec's `ParameterSharding`:

    | Ember                  | ParameterSharding JSON                          |
    |------------------------|-------------------------------------------------|
    | first keyword          | `sharding_type`                                 |
    | `compute_kernel`       | `compute_kernel` (default `"fused"`)            |
    | shard ranks, in order  | `ranks` (data_parallel: the `ranks` list)       |
    | `shards`               | `sharding_spec.shards`: `shard_offsets`, `shard_sizes`, `placement` = `"rank:N/cuda:N"` |
    | `ranks_per_node`       | (from the topology; needed by table_row_wise)   |

    ```mlir
    #ember.sharding<table_wise, shards = [
        #ember.shard<offsets = [0, 0], sizes = [1000, 64], rank = 3>]>
    #ember.sharding<row_wise, shards = [
        #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 0>,
        #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 1>],
        compute_kernel = "fused_uvm_caching">
    #ember.sharding<column_wise, shards = [
        #ember.shard<offsets = [0, 0], sizes = [1000, 32], rank = 0>,
        #ember.shard<offsets = [0, 32], sizes = [1000, 32], rank = 2>]>
    #ember.sharding<table_row_wise, shards = [
        #ember.shard<offsets = [0, 0], sizes = [500, 64], rank = 4>,
        #ember.shard<offsets = [500, 0], sizes = [500, 64], rank = 5>],
        ranks_per_node = 4>
    #ember.sharding<data_parallel>                    // every rank
    #ember.sharding<data_parallel, ranks = [0, 1]>    // these ranks
    ```

    The attribute verifier checks what does not need the table's size (the
    `ember.table` verifier then calls `verifyTableSharding` with rows and dim):

    * `table_wise`: exactly one shard, at offsets `[0, 0]`.
    * `row_wise` and `table_row_wise`: full-width shards (all with column
      offset 0 and the same width) whose row ranges follow each other from
      row 0 without gap or overlap, one per rank (ranks unique).
      `table_row_wise` also needs `ranks_per_node` and all its shards on one
      node.
    * `column_wise`: full-height shards (row offset 0, same height) whose
      column ranges follow each other from column 0; a rank may hold several.
    * `data_parallel`: no shards (the table is replicated); `ranks` lists the
      replicas (unique, non-negative), all ranks when absent.

    `ranks` is only for `data_parallel` (for the other kinds the ranks are the
    shards' ranks), `ranks_per_node` only for `table_row_wise`.
  }];
  let parameters = (ins
      EnumParameter<Ember_ShardingTypeEnum>:$sharding_type,
      OptionalArrayRefParameter<"::mlir::ember::ShardAttr",
                                "the shards, in TorchRec order">:$shards,
      OptionalParameter<"::mlir::DenseI64ArrayAttr",
                        "replica ranks of a data_parallel table">:$ranks,
      DefaultValuedParameter<"int64_t", "0",
                             "ranks per node (table_row_wise)">:$ranks_per_node,
      StringRefParameter<"TorchRec compute kernel",
                         "\"fused\"">:$compute_kernel);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::ember::ShardingType":$shardingType,
                     "::llvm::ArrayRef<::mlir::ember::ShardAttr>":$shards,
                     CArg<"::llvm::StringRef", "\"fused\"">:$computeKernel), [{
      return $_get($_ctxt, shardingType, shards, ::mlir::DenseI64ArrayAttr(), 0,
                   computeKernel);
    }]>
  ];
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    /// TorchRec's `ranks`: the rank of each shard in order, or the replica
    /// ranks of a data_parallel table (empty: every rank).
    ::llvm::SmallVector<int64_t> getShardRanks() const;
    bool isReplicated() const {
      return getShardingType() == ::mlir::ember::ShardingType::data_parallel;
    }
  }];
}

#endif // EMBER_SHARDING_ATTRS_TD
