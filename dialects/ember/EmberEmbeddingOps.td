//===- EmberEmbeddingOps.td - tables and lookups ---------------*- tablegen -*-===//
//
// Embedding tables (symbols or values) and the lookups over them: a single
// embedding bag, a collection of bags keyed by feature, unpooled (sequence)
// lookups and the table-batched grouped lookup.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_EMBEDDING_OPS_TD
#define EMBER_EMBEDDING_OPS_TD

include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

def Ember_TableOp : Ember_Op<"table", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "declares an embedding table as a module-level symbol";
  let description = [{
    Declares table `@name` of the given table type. Its initial value is
    either inline (`init = dense<...>`, an elements attribute of the table's
    storage type) or an external weight file (`external("w.bin", 4096)`: a path
    and a byte offset), or absent (the weights are bound at load time).

    An optional `sharding` attribute (`#ember.sharding<...>`) records how the
    planner split the table over ranks; it must fit the table's shape.

    ```mlir
    ember.table @t_user : !ember.table<1000x64, f32>
    ember.table @t_item : !ember.table<4x2, f32> init = dense<0.5> : tensor<4x2xf32>
    ember.table @t_big : !ember.table<1000000x128, int8_rowwise>
        external("tables/t_big.bin", 0)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Ember_TableType>:$type,
                       OptionalAttr<ElementsAttr>:$value,
                       OptionalAttr<StrAttr>:$file,
                       OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<AnyAttr>:$sharding);
  let assemblyFormat = [{
    $sym_name `:` $type
    (`init` `=` $value^)?
    (`external` `(` $file^ `,` $offset `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::ember::TableType getTableType() {
      return ::llvm::cast<::mlir::ember::TableType>(getType());
    }
  }];
}

def Ember_TableRefOp : Ember_Op<"table.ref",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the value of a table declared with ember.table";
  let description = [{
    ```mlir
    %t = ember.table.ref @t_user : !ember.table<1000x64, f32>
    ```
    The symbol must name an `ember.table` of exactly this type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$table);
  let results = (outs Ember_TableType:$result);
  let builders = [
    OpBuilder<(ins "::mlir::ember::TableOp":$table), [{
      build($_builder, $_state, table.getTableType(),
            ::mlir::FlatSymbolRefAttr::get(table.getSymNameAttr()));
    }]>
  ];
  let assemblyFormat = "$table attr-dict `:` qualified(type($result))";
}

def Ember_TableFromTensorOp : Ember_Op<"table.from_tensor", [Pure]> {
  let summary = "views a weight tensor as an embedding table";
  let description = [{
    The tensor must have the table's storage type: `tensor<rows x dim x T>` for
    float formats (T = f32, f16 or bf16 as the format says) and
    `tensor<rows x rowBytes x i8>` for row-wise quantized ones (`dim + 8` for
    int8_rowwise, `dim / 2 + 8` for int4_rowwise).

    ```mlir
    %t = ember.table.from_tensor %w : tensor<1000x64xf32> -> !ember.table<1000x64, f32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$weights);
  let results = (outs Ember_TableType:$result);
  let assemblyFormat = [{
    $weights attr-dict `:` type($weights) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Lookups
//===----------------------------------------------------------------------===//

def Ember_EmbeddingBagOp : Ember_Op<"embedding_bag", [Pure]> {
  let summary = "pooled lookup of bags of ids in one table (nn.EmbeddingBag)";
  let description = [{
    Bag `b` holds `indices[offsets[b] .. offsets[b + 1])` (the last bag ends
    at the end of `indices` unless `include_last_offset`, in which case
    `offsets` has B + 1 entries). Each bag's rows are pooled with `sum`,
    `mean` or `max`; an empty bag gives zeros. `weights` (per-sample weights,
    one per index) scale the rows and are only allowed with `sum`, as in
    PyTorch. Indices equal to `padding_idx` contribute nothing (and do not
    count for `mean`). The result is `[B, dim]` in the table's float type or
    f32.

    ```mlir
    %r = ember.embedding_bag %t[%ids, %offsets] weights(%w) pooling = sum
        : !ember.table<1000x64, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32>
        -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Ember_TableType:$table,
                       1DTensorOf<[I32, I64]>:$indices,
                       1DTensorOf<[I32, I64]>:$offsets,
                       Optional<1DTensorOf<[AnyFloat]>>:$per_sample_weights,
                       Ember_PoolingModeAttr:$pooling,
                       OptionalAttr<I64Attr>:$padding_idx,
                       UnitAttr:$include_last_offset);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $table `[` $indices `,` $offsets `]`
    (`weights` `(` $per_sample_weights^ `)`)?
    `pooling` `=` custom<PoolingMode>($pooling)
    (`padding_idx` `=` $padding_idx^)?
    (`include_last_offset` $include_last_offset^)?
    attr-dict `:` qualified(type($table)) `,` type($indices) `,` type($offsets)
    (`,` type($per_sample_weights)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ember_EmbeddingBagCollectionOp : Ember_Op<"embedding_bag_collection",
    [Pure]> {
  let summary = "pooled lookups of every KJT feature in its table";
  let description = [{
    TorchRec's `EmbeddingBagCollection`: feature `i` of the KJT (its key `i`)
    is looked up in `tables[feature_tables[i]]` and pooled with that table's
    mode `pooling[feature_tables[i]]`. The result keyed tensor has the KJT's
    keys in order, key `i` with its table's dim. A weighted KJT's weights are
    per-sample weights (only `sum` tables may be used then). Variable-batch
    KJTs are not accepted: a keyed tensor has one batch size.

    ```mlir
    %kt = ember.embedding_bag_collection %kjt tables(%t0, %t1)
        feature_tables = [0, 1] pooling = [sum, mean]
        : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
          !ember.table<1000x16, f32>, !ember.table<500x32, f32>
        -> !ember.keyed_tensor<["user" : 16, "item" : 32], f32>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$features,
                       Variadic<Ember_TableType>:$tables,
                       DenseI64ArrayAttr:$feature_tables,
                       Ember_PoolingModeArrayAttr:$pooling);
  let results = (outs Ember_KeyedTensorType:$result);
  let assemblyFormat = [{
    $features `tables` `(` $tables `)`
    `feature_tables` `=` $feature_tables
    `pooling` `=` custom<PoolingList>($pooling)
    attr-dict `:` qualified(type($features)) `,` qualified(type($tables))
    `->` qualified(type($result))
  }];
  let builders = [
    // Infers the result: the KJT's keys with their tables' dims, in f32.
    OpBuilder<(ins "::mlir::Value":$features, "::mlir::ValueRange":$tables,
                   "::llvm::ArrayRef<int64_t>":$featureTables,
                   "::llvm::ArrayRef<::mlir::ember::PoolingMode>":$pooling)>
  ];
  let hasVerifier = 1;
}

def Ember_SequenceLookupOp : Ember_Op<"sequence_lookup", [Pure]> {
  let summary = "unpooled lookup of a jagged id list in one table";
  let description = [{
    Every id of the jagged input is replaced by its table row: the result has
    the same offsets and `[dim]` dense trailing values.

    ```mlir
    %e = ember.sequence_lookup %t[%ids]
        : !ember.table<1000x64, f32>, !ember.jagged<i64> -> !ember.jagged<f32, [64]>
    ```
  }];
  let arguments = (ins Ember_TableType:$table, Ember_JaggedTensorType:$ids);
  let results = (outs Ember_JaggedTensorType:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` qualified(type($table)) `,`
    qualified(type($ids)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_EmbeddingCollectionOp : Ember_Op<"embedding_collection", [Pure]> {
  let summary = "unpooled lookups of every KJT feature: one jagged per key";
  let description = [{
    TorchRec's `EmbeddingCollection` (sequence embeddings): feature `i` is
    looked up in `tables[feature_tables[i]]` without pooling; result `i` is a
    `!ember.jagged<T, [D_i]>` with feature `i`'s offsets.

    ```mlir
    %u, %i = ember.embedding_collection %kjt tables(%t0, %t1)
        feature_tables = [0, 1]
        : !ember.kjt<["user", "item"], values = i64, lengths = i32>,
          !ember.table<1000x16, f32>, !ember.table<500x32, f32>
        -> !ember.jagged<f32, [16]>, !ember.jagged<f32, [32]>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$features,
                       Variadic<Ember_TableType>:$tables,
                       DenseI64ArrayAttr:$feature_tables);
  let results = (outs Variadic<Ember_JaggedTensorType>:$results);
  let assemblyFormat = [{
    $features `tables` `(` $tables `)`
    `feature_tables` `=` $feature_tables
    attr-dict `:` qualified(type($features)) `,` qualified(type($tables))
    `->` qualified(type($results))
  }];
  let hasVerifier = 1;
}

def Ember_GroupedLookupOp : Ember_Op<"grouped_lookup", [Pure]> {
  let summary = "table-batched pooled lookup over a group of tables";
  let description = [{
    What the group-tables pass makes of several embedding bags that share a
    storage format and pooling mode: one fused (FBGEMM TBE style) lookup.
    Feature `i` of the KJT reads table `tables[feature_tables[i]]` and writes
    its pooled rows to columns `[column_offsets[i], column_offsets[i] + D)` of
    the result, where D is that table's dim. The result keyed tensor holds
    every KJT key, and `column_offsets[i]` must be where the result type puts
    key `i`. All tables have one format.

    ```mlir
    %kt = ember.grouped_lookup %kjt tables(%t0, %t1)
        feature_tables = [0, 1, 0] column_offsets = [0, 16, 48] pooling = sum
        : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>,
          !ember.table<100x16, f32>, !ember.table<200x32, f32>
        -> !ember.keyed_tensor<["a" : 16, "b" : 32, "c" : 16], f32>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$features,
                       Variadic<Ember_TableType>:$tables,
                       DenseI64ArrayAttr:$feature_tables,
                       DenseI64ArrayAttr:$column_offsets,
                       Ember_PoolingModeAttr:$pooling);
  let results = (outs Ember_KeyedTensorType:$result);
  let assemblyFormat = [{
    $features `tables` `(` $tables `)`
    `feature_tables` `=` $feature_tables
    `column_offsets` `=` $column_offsets
    `pooling` `=` custom<PoolingMode>($pooling)
    attr-dict `:` qualified(type($features)) `,` qualified(type($tables))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // EMBER_EMBEDDING_OPS_TD
