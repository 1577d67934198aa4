//===- EmberCollectiveOps.td - asynchronous collectives ------*- tablegen -*-===//
//
// The collectives of a sharded recommendation model: KJT all-to-all (splits,
// then tensors), pooled and sequence embedding all-to-all, reduce-scatter,
// all-gather and all-reduce. Each starts asynchronously and
// yields an `!ember.awaitable<T>`; `ember.wait` gives the `T`.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_COLLECTIVE_OPS_TD
#define EMBER_COLLECTIVE_OPS_TD

include "dialects/ember/EmberDialect.td"
include "dialects/ember/EmberTypes.td"
include "dialects/ember/EmberAttrs.td"
include "dialects/ember/EmberShardingAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A collective communicates with the other ranks of its group: it reads and
// writes state no value carries. MemRead + MemWrite on the default resource
// keep CSE from merging two identical collectives and DCE from dropping one
// whose result is unused (every rank must take part in every collective).
class Ember_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Ember_Op<mnemonic, !listconcat(traits, [MemoryEffects<[MemRead, MemWrite]>])> {
  let hasVerifier = 1;
}

// A collective whose result on a group of one rank is its input unchanged
// (when it has no codec): canonicalization rewrites it to `ember.ready`.
class Ember_IdentityOnOneRankOp<string mnemonic, list<Trait> traits = []>
    : Ember_CollectiveOp<mnemonic, traits> {
  let hasCanonicalizer = 1;
}

defvar Ember_OptionalCodec = OptionalAttr<Ember_CommCodecAttr>;
defvar Ember_Reduction = DefaultValuedAttr<Ember_ReduceKindAttr,
                                           "::mlir::ember::ReduceKind::sum">;

//===----------------------------------------------------------------------===//
// KJT all-to-all
//===----------------------------------------------------------------------===//

def Ember_KJTAllToAllSplitsOp : Ember_CollectiveOp<"kjt_all_to_all.splits"> {
  let summary = "phase 1 of a KJT all-to-all: exchange the split sizes";
  let description = [{
    TorchRec's `KJTAllToAllSplitsAwaitable`. Every rank of `group` holds a KJT
    with the same keys, ordered by destination: the first `key_splits[0]` keys
    go to group position 0, the next `key_splits[1]` to position 1, and so on
    (`key_splits` has one entry per rank and sums to the number of keys). This
    op sends each peer how much it will receive and receives the same from
    every peer, so that phase 2 (`ember.kjt_all_to_all.tensors`) can size its
    buffers.

    The result is an awaitable of a `tensor<W x S x i64>` (W = group size):
    row `r` holds what position `r` sends to this rank: the number of lengths
    entries, the number of values, for a weighted KJT the number of weights,
    and last the sender's batch size (S = 3, or 4 when weighted).

    ```mlir
    %s = ember.kjt_all_to_all.splits %kjt key_splits [2, 1]
           group<ranks = [0, 1]>
           : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
           -> !ember.awaitable<tensor<2x3xi64>>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input,
                       DenseI64ArrayAttr:$key_splits,
                       Ember_GroupAttr:$group);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    $input `key_splits` $key_splits `group` `` $group attr-dict `:`
    qualified(type($input)) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// Number of split entries exchanged per rank: lengths, values,
    /// (weights,) batch size.
    static int64_t getNumSplitEntries(bool weighted) { return weighted ? 4 : 3; }
  }];
}

def Ember_KJTAllToAllTensorsOp
    : Ember_IdentityOnOneRankOp<"kjt_all_to_all.tensors"> {
  let summary = "phase 2 of a KJT all-to-all: exchange lengths, values, weights";
  let description = [{
    TorchRec's `KJTAllToAllTensorsAwaitable`. Takes the KJT and the waited
    result of the matching `ember.kjt_all_to_all.splits` (same `key_splits`
    and group) and sends key slice `r` of the KJT to group position `r`. The
    received KJT holds this rank's keys (one contiguous slice of the input
    keys, given by `key_splits`) with the batches of all ranks concatenated in
    group order: with batch size B per rank, each received key has W * B bags.

    `batch_size_per_rank` (one entry per rank) records the senders' batch
    sizes when they are known at compile time and not all equal (TorchRec's
    `stride_per_rank`); without it the sizes come from the splits.

    The result has the same value/length types, weighting and variable-batch
    flag as the input. On a group of one rank the op is the identity and
    canonicalizes to `ember.ready`.

    ```mlir
    %t = ember.kjt_all_to_all.tensors %kjt, %splits key_splits [2, 1]
           group<ranks = [0, 1]>
           : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
             tensor<2x3xi64>
           -> !ember.awaitable<!ember.kjt<["a", "b"], values = i64, lengths = i32>>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input,
                       RankedTensorOf<[I64]>:$splits,
                       DenseI64ArrayAttr:$key_splits,
                       OptionalAttr<DenseI64ArrayAttr>:$batch_size_per_rank,
                       Ember_GroupAttr:$group);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    $input `,` $splits `key_splits` $key_splits
    (`batch_size_per_rank` $batch_size_per_rank^)? `group` `` $group
    attr-dict `:` qualified(type($input)) `,` type($splits) `->`
    qualified(type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Embedding all-to-all
//===----------------------------------------------------------------------===//

def Ember_PooledAllToAllOp : Ember_IdentityOnOneRankOp<"pooled_all_to_all"> {
  let summary = "all-to-all of pooled embeddings (table-wise / column-wise output dist)";
  let description = [{
    TorchRec's `alltoall_pooled`. Position `r` of the group has computed the
    pooled embeddings of its own tables for the whole global batch:
    `[B_global, dim_per_rank[r]]` with `B_global = sum(batch_size_per_rank)`.
    It sends rows `[sum(batch_size_per_rank[:s]), +batch_size_per_rank[s])` to
    position `s` and receives, from every position, its columns for its own
    batch slice: the result is `[batch_size_per_rank[me], sum(dim_per_rank)]`,
    the columns of position 0 first.

    Without `batch_size_per_rank` the global batch is split evenly (it must
    then divide by the group size), unless `batch_of` names the KJT that this
    rank sent in the input all-to-all: then the batch sizes are those KJTs'
    (possibly different per rank), exchanged at run time. Float payloads may
    travel in a narrower `codec`.

    ```mlir
    %a = ember.pooled_all_to_all %local dim_per_rank [16, 32]
           group<ranks = [0, 1]> codec fp16
           : tensor<8x16xf32> -> !ember.awaitable<tensor<4x48xf32>>
    ```

    `segment_dims` and `segment_columns` (both or neither) place the
    received columns in another order, so that the consumers of the result
    take contiguous column ranges (TorchRec's `permute_pooled_embs`, done by
    the unpack the collective does anyway). The received columns are cut
    into segments in wire order: position 0's columns first, each position's
    in order; `segment_dims[s]` is segment `s`'s width (each position's
    segments sum to its `dim_per_rank`; a position of 0 columns has none)
    and `segment_columns[s]` its first column in the result. The segments
    tile the result's columns exactly once. Without them the result holds
    the columns in wire order.

    ```mlir
    // Position 0 sends tables a (4 columns) and c (4), position 1 table b
    // (8): the result holds a, b, c.
    %a = ember.pooled_all_to_all %local dim_per_rank [8, 8]
           segment_dims [4, 4, 8] segment_columns [0, 12, 4]
           group<ranks = [0, 1]> : tensor<8x8xf32> -> !ember.awaitable<tensor<4x16xf32>>
    ```

    On a group of one rank without codec and without a permutation of its
    columns the op is the identity and canonicalizes to `ember.ready`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Optional<Ember_KeyedJaggedTensorType>:$batch_of,
                       DenseI64ArrayAttr:$dim_per_rank,
                       OptionalAttr<DenseI64ArrayAttr>:$batch_size_per_rank,
                       Ember_GroupAttr:$group,
                       Ember_OptionalCodec:$codec,
                       OptionalAttr<DenseI64ArrayAttr>:$segment_dims,
                       OptionalAttr<DenseI64ArrayAttr>:$segment_columns);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    $input (`batch_of` `(` $batch_of^ `:` qualified(type($batch_of)) `)`)?
    `dim_per_rank` $dim_per_rank
    (`segment_dims` $segment_dims^)? (`segment_columns` $segment_columns^)?
    (`batch_size_per_rank` $batch_size_per_rank^)? `group` `` $group
    (`codec` `` $codec^)? attr-dict `:` type($input) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// True when segment_dims / segment_columns put the received columns in
    /// an order other than the wire order.
    bool permutesColumns();
  }];
}

def Ember_SequenceAllToAllOp : Ember_IdentityOnOneRankOp<"sequence_all_to_all"> {
  let summary = "all-to-all of sequence (unpooled) embeddings, back to their ids' senders";
  let description = [{
    TorchRec's `alltoall_sequence`: the output dist of sharded sequence
    embeddings. `sent` is the KJT this rank sent in the matching input dist
    (`ember.kjt_all_to_all.tensors` with the same `key_splits` and group);
    `input` holds this rank's looked-up rows (one per id it received, `[N,
    ...]`) in the order it received the ids, which must be grouped by sender
    (source-major: what a position that receives one key gets). This rank
    gets back, from each position `p`, one row per id it sent there (the sum
    of `sent`'s lengths over the keys of slice `p`), concatenated in group
    order: the rows of `sent`'s values in their order when each position
    receives at most one key. The row counts depend on the data: the runtime
    exchanges them. Every row keeps its trailing dims and element type.

    ```mlir
    %a = ember.sequence_all_to_all %emb, %sent key_splits [0, 1]
           group<ranks = [0, 1]>
           : tensor<?x16xf32>, !ember.kjt<["a"], values = i64, lengths = i64>
           -> !ember.awaitable<tensor<?x16xf32>>
    ```

    On a group of one rank without codec the op is the identity (the one
    chunk goes to itself) and canonicalizes to `ember.ready`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Ember_KeyedJaggedTensorType:$sent,
                       DenseI64ArrayAttr:$key_splits,
                       Ember_GroupAttr:$group,
                       Ember_OptionalCodec:$codec);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    $input `,` $sent `key_splits` $key_splits `group` `` $group
    (`codec` `` $codec^)? attr-dict `:` type($input) `,` qualified(type($sent))
    `->` qualified(type($result))
  }];
}

def Ember_ReduceScatterOp : Ember_IdentityOnOneRankOp<"reduce_scatter"> {
  let summary = "reduce over the group, then scatter along dim 0 (row-wise output dist)";
  let description = [{
    TorchRec's `reduce_scatter_base_pooled` and, with `splits`,
    `reduce_scatter_v_pooled`: the inputs of all ranks (same shape) are
    reduced element-wise with `reduction`, and position `r` of the group
    keeps rows `[sum(splits[:r]), +splits[r])` of the result. Without
    `splits` the rows split evenly: the input has W * B rows, the result B.
    With `splits` (one entry per rank, summing to the input rows) the result
    has this rank's split of rows. With `batch_of` (the KJT this rank sent in
    the input all-to-all) the splits are the batch sizes of those KJTs,
    exchanged at run time. Trailing dims and element type are kept; `mean`
    needs a floating-point payload.

    ```mlir
    %a = ember.reduce_scatter sum %x group<ranks = [0, 1]>
           : tensor<8x64xf32> -> !ember.awaitable<tensor<4x64xf32>>
    %b = ember.reduce_scatter sum %y splits [3, 5] group<ranks = [0, 1]>
           : tensor<8x64xf32> -> !ember.awaitable<tensor<5x64xf32>>
    ```

    On a group of one rank without codec the op is the identity and
    canonicalizes to `ember.ready`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Optional<Ember_KeyedJaggedTensorType>:$batch_of,
                       Ember_Reduction:$reduction,
                       OptionalAttr<DenseI64ArrayAttr>:$splits,
                       Ember_GroupAttr:$group,
                       Ember_OptionalCodec:$codec);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    `` $reduction $input
    (`batch_of` `(` $batch_of^ `:` qualified(type($batch_of)) `)`)?
    (`splits` $splits^)? `group` `` $group
    (`codec` `` $codec^)? attr-dict `:` type($input) `->` qualified(type($result))
  }];
}

def Ember_AllGatherOp : Ember_IdentityOnOneRankOp<"all_gather"> {
  let summary = "gather the inputs of all ranks, concatenated along dim 0";
  let description = [{
    TorchRec's `all_gather_base_pooled`: every rank contributes a tensor of
    the same shape `[B, ...]`; every rank receives `[W * B, ...]`, the rows of
    group position 0 first.

    ```mlir
    %a = ember.all_gather %x group<ranks = [0, 1, 2, 3]>
           : tensor<2x16xf32> -> !ember.awaitable<tensor<8x16xf32>>
    ```

    On a group of one rank without codec the op is the identity and
    canonicalizes to `ember.ready`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Ember_GroupAttr:$group,
                       Ember_OptionalCodec:$codec);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    $input `group` `` $group (`codec` `` $codec^)? attr-dict `:`
    type($input) `->` qualified(type($result))
  }];
}

def Ember_AllReduceOp : Ember_IdentityOnOneRankOp<"all_reduce"> {
  let summary = "element-wise reduction over the group, result on every rank";
  let description = [{
    Every rank contributes a tensor of the same type and receives the
    element-wise `reduction` (sum, mean, max, min) of all of them; `mean`
    needs a floating-point payload. Data-parallel tables and dense layers
    reduce their gradients this way.

    ```mlir
    %a = ember.all_reduce sum %x group<ranks = [0, 1]>
           : tensor<4x8xf32> -> !ember.awaitable<tensor<4x8xf32>>
    ```

    On a group of one rank without codec the op is the identity (for every
    reduction) and canonicalizes to `ember.ready`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Ember_Reduction:$reduction,
                       Ember_GroupAttr:$group,
                       Ember_OptionalCodec:$codec);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = [{
    `` $reduction $input `group` `` $group (`codec` `` $codec^)? attr-dict
    `:` type($input) `->` qualified(type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Awaitables
//===----------------------------------------------------------------------===//

def Ember_WaitOp : Ember_Op<"wait", [Pure,
    TypesMatchWith<"result is the awaitable's value type", "awaitable", "result",
                   "::llvm::cast<::mlir::ember::AwaitableType>($_self).getValueType()">]> {
  let summary = "wait for an asynchronous result";
  let description = [{
    Blocks until the awaitable's collective has completed and gives its
    value. `ember.wait` of an `ember.ready` folds to the ready value.

    ```mlir
    %t = ember.wait %a : !ember.awaitable<tensor<4x48xf32>>
    ```
  }];
  let arguments = (ins Ember_AwaitableType:$awaitable);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$awaitable attr-dict `:` qualified(type($awaitable))";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$awaitable), [{
      build($_builder, $_state,
            ::llvm::cast<::mlir::ember::AwaitableType>(awaitable.getType())
                .getValueType(),
            awaitable);
    }]>
  ];
  let hasFolder = 1;
}

def Ember_ReadyOp : Ember_Op<"ready", [Pure,
    TypesMatchWith<"result is an awaitable of the value", "value", "result",
                   "::mlir::ember::AwaitableType::get($_self.getContext(), $_self)">]> {
  let summary = "an awaitable whose value is already available";
  let description = [{
    TorchRec's `NoWait`: wraps a value that needs no communication (a local
    shard's output, a collective on a group of one rank) so that it can flow
    where an awaitable is expected.

    ```mlir
    %a = ember.ready %t : tensor<4x48xf32>
    ```
  }];
  let arguments = (ins AnyType:$value);
  let results = (outs Ember_AwaitableType:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$value), [{
      build($_builder, $_state,
            ::mlir::ember::AwaitableType::get($_builder.getContext(),
                                              value.getType()),
            value);
    }]>
  ];
}

#endif // EMBER_COLLECTIVE_OPS_TD
