//===- Passes.td - Ember compiler passes -----------------------*- tablegen -*-===//
//
// Every Ember pass is declared here; docs/passes.md is generated from these
// declarations (mlir-tblgen -gen-pass-doc) plus passes/PassesOverview.md.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_PASSES_TD
#define EMBER_PASSES_TD

include "mlir/Pass/PassBase.td"

def EmberFunctionalize : Pass<"ember-functionalize"> {
  let summary = "Removes ember.mut buffers, views and writes (value semantics)";
  let description = [{
    Rewrites the mutation model of the frontends (`ember.mut.from_tensor`,
    `ember.mut.slice`, `ember.mut.copy`, `ember.mut.to_tensor`) into pure
    value semantics. Each buffer made by `mut.from_tensor` is replaced by the
    chain of tensor values it holds, walking its block in program order:

    * `mut.from_tensor %t`: the buffer's value is `%t`.
    * `mut.slice`: a view; it only records the slice relative to its parent.
    * `mut.copy %v into %m`: when `%m` is the buffer, its value becomes
      `%v`; when `%m` is a view `s_1(...(s_k(buffer)))`, the slices
      `s_1 .. s_{k-1}` of the current value are extracted and `%v` is
      inserted back through them (`tensor.insert_slice` chain), giving the
      buffer's new value.
    * `mut.to_tensor %m`: the buffer's current value, through a
      `tensor.extract_slice` chain for a view. It sees every earlier write
      and none of the later ones.

    `tensor.cast` bridges static/dynamic differences between the mutable
    types and the values written or read. An in-place update
    (`to_tensor` → op → `copy` back) becomes the op on the current value.
    The output is meant to be cleaned by `ember-simplify-slices` (identity
    and nested slices) and `canonicalize`/`cse`; values this pass creates
    and leaves unused (writes never read) are erased here.

    Handled: straight-line code. Every use of a buffer or of a view of it
    must be an `ember.mut` op in the block that made the buffer. Anything
    else is an error at the offending op and the pass fails without
    changing the IR: a mutable block or function argument, a mutable value
    passed to another op (`func.call`, `func.return`, `scf.yield`, ...) or
    used inside a nested region, a mutable value made by any op other than
    `mut.from_tensor`/`mut.slice`, and a write whose value does not fit the
    slice. After the pass no `ember.mut` op and no `!ember.mut` type
    remains (checked).
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def EmberSimplifySlices : Pass<"ember-simplify-slices"> {
  let summary = "Drops whole-dimension slices and folds nested slices";
  let description = [{
    Cleans the slices that frontends and `ember-functionalize` produce
    (onnx's `remove_unnecessary_slices`, and more):

    * `tensor.extract_slice` covering its whole source (offset 0, stride 1
      and the whole dimension in every dim, not rank-reducing) becomes its
      source. A size is the whole dimension when it is the static size of
      the source (or of a tensor it was cast or inserted from), or a
      `tensor.dim` of the source (seen through `tensor.insert_slice`
      destinations and `tensor.cast`, which keep the runtime shape),
      possibly clamped the way importers write `end = INT64_MAX`:
      `arith.minsi/minui(x, c)` with a constant `c >= 2^62`,
      `arith.maxsi(x, c)` with `c <= 0` (`arith.maxui` with 0), `x - 0`,
      `x + 0`, and `arith.index_cast(ui)` between `index` and 64-bit
      integers (narrower casts could truncate and are not seen through).
      An offset is 0 when it is the constant or `min(0, x)` of a dimension
      (the ONNX importer's clamped `start = 0`). These steps are only
      trusted when they end at a `tensor.dim`, a value in `[0, 2^62)`.
    * `tensor.insert_slice` covering its whole destination (not
      rank-expanding) becomes the inserted value, cast to the destination
      type when the two differ in static information.
    * `tosa.slice` with start 0 and, in every dim, size -1 (to the end) or
      the static dim size becomes its input.
    * `extract_slice` of `extract_slice` merges into one slice (upstream
      `MergeConsecutiveExtractSlice`; dynamic offsets compose through
      `affine.apply`).
    * A write through a nested view as `ember-functionalize` emits it,
      `insert_slice (insert_slice %v into (extract_slice %d [s1]) [s2]) into %d [s1]`,
      becomes `insert_slice %v into %d [s1 ∘ s2]`.
    * Consecutive operands of a `tosa.concat` / `tensor.concat` that are
      adjacent ranges of one tensor along the concat axis
      (`extract_slice`s with unit strides, the same offsets and sizes on
      the other dims, constant offset and size on the axis, one ending where
      the next starts) become one `extract_slice`; a concat left with one
      operand becomes it. Run after `ember-partition`, this takes away the
      slices and the concat with which a sharded model reassembles its
      pooled embeddings from the output dist (then a whole-source slice).

    The upstream canonicalization patterns of `tensor.extract_slice`,
    `tensor.insert_slice` and `tensor.cast` run alongside, but only on
    slices, casts and concats (and the ops the rewrites create): other ops keep their
    form, so the pass can run early without disturbing the rest of the IR.
    Upstream `canonicalize` alone drops a whole-source slice only when all
    sizes are static and the source and result types are equal; it neither
    recognises `tensor.dim` or clamped sizes, nor `tosa.slice` with size -1,
    nor merges nested slices (see docs/passes.md). Dead `tensor.dim` and
    index arithmetic left behind are for `canonicalize` to remove.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def EmberFoldShapes : Pass<"ember-fold-shapes"> {
  let summary = "Resolves tensor.dim of Ember results and folds shape arithmetic";
  let description = [{
    Works on shape computations only (`tensor.dim` and `index` arithmetic,
    and what the rewrites create); every other op keeps its form.

    * `tensor.dim %r, 0` of a dynamic batch dim of an Ember pooled result
      becomes the batch size of its input: for `ember.embedding_bag`, the
      size of `offsets` (minus 1 with `include_last_offset`); for
      `ember.keyed_tensor.get`/`values` of a keyed tensor made by
      `ember.embedding_bag_collection` or `ember.grouped_lookup`,
      `ember.kjt.stride` of their KJT; of `ember.keyed_tensor.create %v`,
      `tensor.dim %v, 0`; through `ember.keyed_tensor.regroup` (all inputs
      share the batch).
    * Upstream: `tensor.dim` of ops that reify their result shapes
      (`tensor.empty`, slices, casts, ...; the
      `resolve-ranked-shaped-type-result-dims` and
      `resolve-shaped-type-result-dims` patterns) and the `tensor.dim`
      canonicalizations, with folding of the `index` arithmetic.

    Static dims fold to constants (as upstream `canonicalize` does); a
    dynamic dim is only ever replaced by another symbolic value, so the
    batch stays symbolic. What upstream `canonicalize` does not do is the
    first item: it knows nothing of Ember ops, and `tensor.dim` of their
    results would otherwise keep the lookups alive in shape computations.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def EmberSplitEmbeddingCollections : Pass<"ember-split-embedding-collections"> {
  let summary = "Splits embedding collections into one sequence lookup per feature";
  let description = [{
    Every `ember.embedding_collection` (TorchRec's `EmbeddingCollection`:
    unpooled lookups, one jagged result per KJT key) becomes the KJT split
    into one-key KJTs (`ember.kjt.split`) and, per key, an
    `ember.sequence_lookup` of the jagged tensor of its values and offsets
    (`ember.jagged.create`, i64 offsets) in the key's table.
    Each lookup keeps the collection's table name (`ember.table_name`, from
    `ember.table_names`) and module path (`ember.module`), which the sharding
    planner uses to name its tables. The lookups are what the planner, the
    partitioning (sharded sequence lookups) and the plan emitter
    (`embedding_sequence`) work on. IR without collections is unchanged.
  }];
}

def EmberGroupTables : Pass<"ember-group-tables"> {
  let summary = "Table-batches embedding bag collections into grouped lookups";
  let description = [{
    The TBE grouping of TorchRec/FBGEMM: tables that share the storage
    format, the pooling mode and the kernel (the sharding type and
    `compute_kernel` of the table symbol's sharding, `fused` by default;
    unsharded tables group only with unsharded ones) are looked up by one
    `ember.grouped_lookup`. Every keyed tensor keeps its exact type
    and layout. Two steps:

    1. Each `ember.embedding_bag_collection` becomes one grouped lookup per
       group of its features (groups in the order of their first feature;
       each takes only the tables its features use). With one group the
       grouped lookup produces the collection's keyed tensor directly
       (column offsets are where that type puts each key). With several,
       each group reads its keys through `ember.kjt.permute` and an
       `ember.keyed_tensor.regroup` restores the collection's key order.
    2. Grouped lookups in one block with the same format, pooling, kernel
       and element type whose KJTs select **disjoint** keys of one
       source KJT (through `ember.kjt.permute` / `ember.kjt.split`) merge
       into one grouped lookup over that source (permuted to the keys used,
       in source order); each former lookup becomes a regroup of the merged
       keyed tensor, and regroups of regroups are flattened. The merged op
       goes where the first of them was, so it is only done when the source
       KJT and every table are defined before that point. Lookups that read
       the same key (two collections over one KJT) are not merged.

    Single `ember.embedding_bag` ops are not grouped (their ids are plain
    tensors, not KJT features). IR without collections or mergeable grouped
    lookups is left unchanged.
  }];
}

def EmberRaiseEmbeddingBags : Pass<"ember-raise-embedding-bags"> {
  let summary = "Raises torch's EmbeddingBag loops to ember.embedding_bag";
  let description = [{
    `torch.onnx.export` (torch 1.13, opsets 13 to 17) writes every
    `nn.EmbeddingBag` as an ONNX `Loop` over the bags, which the ONNX
    importer imports as an `scf.for` pooling one row per bag. This pass
    replaces each such loop by
    `ember.table.from_tensor` + `ember.embedding_bag` (no `padding_idx`:
    torch refuses to export one). The loop must be exactly what the
    importer makes of torch's loop; every op, operand, constant and
    shape on the path from the yielded value back to the loop's inputs is
    checked:

    * `scf.for %i = 0 to %trip step 1` with one `iter_args` initialised by
      `tensor.empty`, yielding `tensor.insert_slice %row into %acc[%i, 0]
      [1, D] [1, 1]` (the accumulator used by nothing else), and only
      side-effect-free ops without regions in its body;
    * `%row` (through the `[1, D]`/`[D]` reshapes) is `tosa.reduce_sum`
      (sum), `tosa.reduce_sum` times `tosa.reciprocal` of the bag size
      (mean) or `tosa.reduce_max` (max) along axis 0 of the bag's rows;
    * the rows are the `tosa.gather` of the `[R, D]` table (f32, f16 or
      bf16) at the bag's ids (through the importer's i32 truncation and
      negative-index wrapping by R), optionally times the bag's slice of
      the per-sample weights (sum only);
    * the bag is `ids[start : end]` as the importer writes a run-time ONNX
      Slice (bounds wrapped and clamped to the size of `ids`), with
      `start = bounds[%i]` and `end = bounds[1:][%i]` (a slice of
      `bounds`, or two constants, as for torch's offsets of a 2-D input),
      the same for the weights' slice, and the trip count is the size of
      `bounds[1:]`;
    * `bounds = tosa.concat(offsets, [size(ids)])` gives `offsets`
      without `include_last_offset`, and so does a constant `bounds`
      whose last value is the static size of `ids` (the other values
      become the offsets constant); any other 1-D i32/i64 `bounds` is
      taken as offsets with `include_last_offset`, which pools the same
      bags; ids and offsets are both i32 or both i64 (the `arith.extsi`
      torch puts on i32 offsets before the concat is looked through);
    * the table, ids, offsets and weights are defined outside the loop.

    A loop that differs in any of these is left as it is, and so are the
    ops outside the loop (the bounds, the trip count, `tensor.empty`) that
    only the loop used: `canonicalize` removes them. The raised op
    has PyTorch's semantics where the ONNX graph's differ on inputs
    PyTorch rejects or pools differently: an empty bag gives zeros (the
    ONNX graph gives NaN for mean and the lowest float for max), negative
    or out-of-range ids and non-monotonic offsets are errors of the
    lookup (ONNX wraps and clamps them), and ids are not truncated to 32
    bits.
  }];
  let dependentDialects = [
    "::mlir::ember::EmberDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def EmberRaiseDenseOps : Pass<"ember-raise-dense-ops"> {
  let summary = "Raises the importer's decomposed dense layers to Ember ops";
  let description = [{
    Recognises, in every block of every `func.func`, what the ONNX importer
    and torch's exporter make of the dense layers the runtime runs as one
    kernel each, and replaces each pattern by its op (docs/kernels-dense.md;
    the ops are in docs/dialect.md):

    * **`ember.linear`**: nn.Linear, `collapse_shape(tosa.matmul(
      expand_shape(x), W))` with `x` 2-D, `W` a constant (or a transpose or
      reshape of one) `[1, K, N]`, zero zero-points, f32; then, when the
      value before has no other reader, a bias `tosa.add` of a constant with
      `N` elements ending in `N`, then a ReLU `tosa.clamp` (min 0, max at
      least the largest float), `tosa.sigmoid` or `tosa.tanh`. The matmul
      must have one reader. The op takes `W` as `[K, N]`
      (`transpose_weight = false`) and the bias as `[N]`.
    * **`ember.softmax`**: `mul(e, reciprocal(reduce_sum(e, a)))` with
      `e = exp(sub(x, reduce_max(x, a)))`, both reductions over the same
      axis of the same `x`, the types of `x`, `e` and the result equal, f32,
      the mul's shift zero.
    * **`ember.layer_norm`**: `mean = mul(reduce_sum*(x), 1/N)`,
      `c = sub(x, mean)`, `var = mul(reduce_sum*(mul(c, c)), 1/N)`,
      `y = mul(c, rsqrt(add(var, eps)))`, then optionally `mul` by a constant
      scale and `add` of a constant shift, each holding one value per
      normalized element (the longest form wins). The `reduce_sum`s run
      over the trailing axes `[axis, rank)` one axis at a time, both `1/N`
      are splat constants within 1e-6 of the inverse of the static element
      count of those axes, `eps` is a splat constant, f32, and the result has
      the type of `x`.
    * **`ember.dcn_cross`**: `add(mul(x0, L), xl)` (either operand order)
      with `L` the bias-added, collapsed `tosa.matmul` of `xl` (expanded
      from 2-D) by a constant `[1, D, D]` (full rank), or of a first such
      matmul by a constant (low rank: `V`, then `W`); a bias, when present,
      holds `D` values; `x0`, `xl`, the product and the result all of one
      f32 `[B, D]` type. It takes the linear chains it is made of; the
      weights become `[out, in]`.
    * **`ember.dot_interaction`**: the DLRM interaction
      `concat(x, R)` on axis 1 where `R` comes from
      `Z = tosa.matmul(T, tosa.transpose(T, [0, 2, 1]))` through reshapes,
      `tensor.cast`s, transposes and `tosa.gather`s each read only there
      (`tensor.dim` aside) and not part of a linear chain, `T` a reshape of
      `concat(x, e1, ..., ek)` on axis 1, `x` f32 `[B, D]` with a static
      `D`, each `e` f32 `[B, m·D]`. The pairs `R` picks are found by running
      the data movement, with the shape and index arithmetic it reads
      (`tensor.dim` of these values, `arith` integer ops, `from_elements`,
      integer tosa add/sub/mul, constants), on element labels at two batch
      sizes (one when the batch is static): `T` must be `[B, F + 1, D]`,
      every dim on the way the batch or a constant, the gather indices the
      same at both sizes, and the columns of `R` exactly a whole triangle of
      `Z` in the kernel's `"dlrm"` or `"torchrec"` order, with or without
      the diagonal, the same for every sample. Several `e` become one
      `tosa.concat`; `tensor.dim` of the values inside becomes a constant or
      `tensor.dim` of `x`.
    * **`ember.jagged.sum`**: `tosa.reduce_sum` over dim 1 of an
      `ember.jagged.to_padded` with zero padding that nothing else reads
      (a sequence model's `to_padded_dense(L).sum(1)` or `.mean(1)`), f32,
      static trailing dims; a `tosa.reshape` gives the reduction's
      `[B, 1, D...]`. The padded tensor is never made.

    Patterns are found last op first, so a pattern ending later in the
    block claims its ops before one that would end inside it; softmax and
    layer norm patterns do not take ops of linear chains. Ops of a pattern
    that something outside it reads (CSE may share a reduction) stay, and
    so does everything that does not match exactly: the plan emitter then
    runs it op by op, which computes the same values. The ops replaced and
    the shape arithmetic only they read are erased.

    ember-compile runs this pass after the cleanup passes, before sharding
    is planned.
  }];
  let dependentDialects = [
    "::mlir::ember::EmberDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::tosa::TosaDialect"
  ];
}

def EmberPartition : Pass<"ember-partition", "::mlir::ModuleOp"> {
  let summary = "Rewrites a sharded model into one SPMD program per rank";
  let description = [{
    Reads the module's `ember.world_size` and the `ember.sharding` attribute
    (a `#ember.sharding`, set by `--ember-plan-sharding` or by hand) of every
    `ember.embedding_bag` in the entry function, and replaces the function by
    one program per rank, `@<function>_rank<r>` with attribute `ember.rank`.
    In each, the sharded bags are computed as TorchRec's sharded modules do:

    1. **Input dist.** The bags of every table become one KJT per weight
       class (`ember.kjt.from_bags`; unweighted and weighted tables travel
       separately), one key per shard: a table-wise table is one key, a
       column-wise table one key per column shard (its ids are sent to
       every shard's rank), a row-wise or table-row-wise table is
       `ember.kjt.bucketize`d into one key per row block. The keys are
       permuted into destination order and sent with
       `ember.kjt_all_to_all.splits` / `.tensors`.
    2. **Lookups.** Each rank looks up the received bags of every rank in
       the shards it holds (weights sliced from the table constant; a
       row-wise quantized table's shards are rows of its bytes, a column
       shard its columns' codes then each row's own scale and bias), one
       `ember.grouped_lookup` per output route, pooling mode and table
       format.
    3. **Output dist.** `ember.pooled_all_to_all` returns table-wise and
       column-wise results (and the partial sums of row-wise tables whose
       shards are not on every rank, added at the sample's rank);
       `ember.reduce_scatter sum` returns row-wise tables sharded over every
       rank. Both take their per-rank batch sizes from the sent KJT
       (`batch_of`), so ranks may run different batch sizes. Slices,
       concatenations (column shards) and adds give each bag its `[B, D]`.

    An `ember.embedding_bag_collection` (a KJT input) that shards any of its
    tables (its `ember.sharding` is an array, one per table) first becomes
    one `ember.embedding_bag` per feature over the KJT's one-key parts
    (`ember.kjt.split`, `.values`, `.offsets`, `.weights`), each with its
    table's sharding, and an `ember.keyed_tensor.create` of their columns;
    those bags are then partitioned as above. A collection whose tables are
    all data parallel stays whole.

    Data-parallel tables keep their `ember.embedding_bag` (every rank holds
    the table); the rest of the model is data parallel. With a world size
    of 1 the attributes are dropped and nothing else changes.

    Errors (at the bag): a bag without a sharding, a shard on a rank outside
    the world, a sharded bag with `padding_idx`, a table that is not a
    constant, a row-wise table with `max` pooling (partial results are
    summed; `mean` divides the sum by the bag size), row-wise shards that are not equal row blocks (what
    `kjt.bucketize` produces), column shards of an `int4_rowwise` table
    that start or end at an odd column (two codes a byte), bags with
    different id types.
  }];
  let options = [
    Option<"functionName", "function", "std::string", "\"main\"",
           "the function to partition">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tosa::TosaDialect"];
}

def EmberPlanSharding : Pass<"ember-plan-sharding", "::mlir::ModuleOp"> {
  let summary = "Chooses a sharding for every embedding table (the planner)";
  let description = [{
    Collects the tables of every `ember.embedding_bag` and
    `ember.embedding_bag_collection` (rows, dim, storage format, pooling,
    per-sample weights, and the features looked up in each, with their mean
    pooling factor from `stats-file`, else the static ids / bags of an
    `embedding_bag` or of the `ember.kjt.create` of a collection, else 1),
    runs the sharding planner of
    `sharding/` (cost and storage models, greedy seeds improved by
    local search; docs/sharding.md) and records its choice:

    * `ember.sharding` on every `ember.embedding_bag` (an
      `#ember.sharding<...>`) and every `ember.embedding_bag_collection`
      (an array with one `#ember.sharding<...>` per table operand, in
      operand order);
    * the `sharding` of the `ember.table` symbol a table is read from, when
      it is read with `ember.table.ref`;
    * `ember.world_size` (i64) on the module.

    A table is named by its `ember.table` symbol; otherwise by the first
    KJT key looked up in it (collections) or the op's location name
    (`embedding_bag`), else `table_<n>`; names are made unique with a
    `_<k>` suffix. A table used by several ops is planned once.

    `sharding` forces one kind on every table that allows it (row_wise and
    table_row_wise need sum pooling, column_wise a dim that is a multiple
    of 4; other tables keep the planner's choice, with a note in the
    report). `table-sharding` entries `NAME=KIND[:KERNEL][@R1/R2/...]`
    force a kind and kernel per table and pin its shards to ranks;
    `plan-file` imports a plan in the JSON shape of TorchRec's
    ParameterSharding (tables it names keep their sharding, the rest is
    planned). `export-file` writes the chosen plan in the same shape and
    `report-file` a readable report of every rank's cost and memory (`-`:
    standard output), as text or, with `report-format=html` or a file name
    ending in `.html`, as one self-contained HTML page; both are written
    only when planning succeeds.

    It runs before `ember-group-tables` (which groups tables by their
    sharding); an `ember.grouped_lookup` in the input is an error.

    Errors (the pass fails and changes nothing): a table that fits on no
    rank (each listed with its memory shortfall), an unknown table in an
    override, the statistics or the imported plan, a forced kind a table
    does not allow, unreadable or malformed files.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", "0",
           "Number of ranks (0: the topology file's, else 1)">,
    Option<"ranksPerNode", "ranks-per-node", "int64_t", "0",
           "Ranks per node (0: the topology file's, else 8)">,
    Option<"batchSize", "batch-size", "int64_t", "0",
           "Batch size per rank (0: 512)">,
    Option<"sharding", "sharding", "std::string", "\"auto\"",
           "auto, table_wise, row_wise, column_wise, table_row_wise or "
           "data_parallel">,
    ListOption<"tableSharding", "table-sharding", "std::string",
               "Per-table overrides NAME=KIND[:KERNEL][@R1/R2/...]">,
    Option<"optimizer", "optimizer", "std::string", "\"none\"",
           "Optimizer state kept beside the weights: none, sgd, "
           "rowwise_adagrad, adagrad or adam">,
    Option<"includeBackward", "include-backward", "bool", "false",
           "Count the backward estimate in the cost (training plans)">,
    Option<"objective", "objective", "std::string", "\"\"",
           "inference, training (the backward pass and the gradient "
           "all-reduce of replicas count; same as include-backward) or "
           "training-lean (the training step within the inference plan's "
           "bytes); default: inference unless include-backward">,
    Option<"leanSlack", "lean-slack", "double", "-1.0",
           "training-lean: how far above the inference plan's busiest "
           "rank's bytes each rank's may go, as a fraction (default 0.05)">,
    Option<"memoryReservation", "memory-reservation", "std::string",
           "\"ember\"",
           "Device memory kept from the embeddings: ember (the topology's "
           "reserved_device_fraction, 10%) or torchrec (15% plus 20 copies "
           "of the input ids, as TorchRec's planner)">,
    Option<"pipelineDepth", "pipeline-depth", "int64_t", "0",
           "Batches in flight whose buffers memory holds (0: 2)">,
    Option<"topologyFile", "topology-file", "std::string", "\"\"",
           "Topology JSON file (see docs/sharding.md)">,
    Option<"statsFile", "stats-file", "std::string", "\"\"",
           "Table/feature statistics JSON file (pooling factors)">,
    Option<"planFile", "plan-file", "std::string", "\"\"",
           "Plan to import (TorchRec ParameterSharding JSON)">,
    Option<"exportFile", "export-file", "std::string", "\"\"",
           "Where to write the chosen plan as JSON ('-': stdout)">,
    Option<"reportFile", "report-file", "std::string", "\"\"",
           "Where to write the plan report ('-': stdout)">,
    Option<"reportFormat", "report-format", "std::string", "\"\"",
           "text or html (default: html for a report file ending in .html "
           "or .htm, else text)">
  ];
  let dependentDialects = ["::mlir::ember::EmberDialect"];
}

def EmberSetCommCodec : Pass<"ember-set-comm-codec", "::mlir::ModuleOp"> {
  let summary = "Sets the wire format of the collectives' float payloads";
  let description = [{
    Sets the `codec` of every `ember.pooled_all_to_all`,
    `ember.reduce_scatter` and `ember.all_reduce` whose payload is `f32` and
    whose group has more than one rank: their embeddings or partial sums then
    travel as 16-bit values (`fp16` or `bf16`) and are widened back to
    `f32` on arrival (the runtime's `comm_dtype`, docs/cuda-nccl.md).
    `codec=none` removes every codec. `ember-compile --comm-dtype
    float16|bfloat16` runs this pass after partitioning.

    Errors: a codec other than none, fp16 and bf16 (the runtime has no fp8
    codec).
  }];
  let options = [
    Option<"codec", "codec", "std::string", "\"fp16\"",
           "none, fp16 or bf16">,
  ];
}

def EmberAssignStreams : Pass<"ember-assign-streams", "::mlir::ModuleOp"> {
  let summary = "Puts the collectives on the communication stream";
  let description = [{
    Marks every collective that moves data between ranks
    (`ember.kjt_all_to_all.tensors`, `ember.pooled_all_to_all`,
    `ember.sequence_all_to_all`, `ember.reduce_scatter`, `ember.all_gather`,
    `ember.all_reduce`) with `ember.stream = 1 : i32`, the stream its
    communication runs on; `stream=0` removes the marks (program order).
    The plan emitter gives the collective's instruction that stream, then
    orders the program so that communication starts early and the compute
    that reads a result waits for it through events (docs/plan-format.md,
    "Streams and events"). `ember-compile` runs this pass last for the CUDA
    target and for every plan of more than one rank (`--comm-stream`
    overrides: true for one-rank CPU plans too, false for none), so the
    assignment shows in `--emit mlir`.

    ```mlir
    %a = ember.pooled_all_to_all %x batch_of(%k : ...) group<...>
        {ember.stream = 1 : i32} : ...
    ```

    Errors: a stream other than 0 and 1.
  }];
  let options = [
    Option<"stream", "stream", "int", "1",
           "the stream of communication: 1, or 0 for program order">,
  ];
}

#endif // EMBER_PASSES_TD
