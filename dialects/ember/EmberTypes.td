//===- EmberTypes.td - Ember types ---------------------------*- tablegen -*-===//
//
// Jagged tensors, keyed jagged tensors (KJT), keyed tensors, awaitables,
// embedding tables and mutable (reference-semantics) tensors.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_TYPES_TD
#define EMBER_TYPES_TD

include "dialects/ember/EmberDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Ember_JaggedTensorType : Ember_Type<"JaggedTensor", "jagged"> {
  let summary = "a tensor with one ragged dimension: values plus offsets";
  let description = [{
    `!ember.jagged<f32, [4]>` has rows of varying length whose elements are
    `f32` vectors of 4 (the dense trailing dims, possibly none). It is stored as
    a values tensor `[N, 4]` and an `i64` offsets tensor `[B + 1]`: row `b`
    holds values `offsets[b] .. offsets[b + 1]`.

    ```mlir
    !ember.jagged<i64>         // id lists
    !ember.jagged<f32, [64]>   // sequence embeddings of dim 64
    ```
  }];
  let parameters = (ins "Type":$elementType,
                        OptionalArrayRefParameter<"int64_t">:$denseShape);
  let assemblyFormat = "`<` $elementType (`,` `[` $denseShape^ `]`)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The type of the values tensor: tensor<? x denseShape x elementType>.
    ::mlir::RankedTensorType getValuesType() const;
    /// The type of the offsets tensor: tensor<? x i64>.
    ::mlir::RankedTensorType getOffsetsType() const;
  }];
}

def Ember_KeyedJaggedTensorType : Ember_Type<"KeyedJaggedTensor", "kjt"> {
  let summary = "a keyed jagged tensor (KJT): one jagged id list per feature key";
  let description = [{
    The sparse input of a recommendation model, TorchRec's `KeyedJaggedTensor`.
    The keys are static; the data is a flat `values` tensor (ids, `i32` or
    `i64`), `lengths` (`i32` or `i64`) laid out key-major (`[K * B]`: the B bags
    of key 0, then of key 1, ...) and/or the matching `offsets` (`[K * B + 1]`).

    * `weighted`: each value carries an `f32` weight (per-sample weights).
    * `variable_batch`: each key has its own batch size; the KJT then carries
      per-key batch sizes (`[K]`) and lengths has `sum(batch_sizes)` entries.

    ```mlir
    !ember.kjt<["user", "item"], values = i64, lengths = i32>
    !ember.kjt<["user"], values = i64, lengths = i64, weighted, variable_batch>
    ```
    Keys must be non-empty and unique.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$keys, "::mlir::Type":$valueType,
                        "::mlir::Type":$lengthType, "bool":$weighted,
                        "bool":$variableBatch);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<::llvm::StringRef>":$keys,
                     "::mlir::Type":$valueType, "::mlir::Type":$lengthType,
                     CArg<"bool", "false">:$weighted,
                     CArg<"bool", "false">:$variableBatch)>
  ];
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    bool isWeighted() const { return getWeighted(); }
    bool isVariableBatch() const { return getVariableBatch(); }
    unsigned getNumKeys() const { return getKeys().size(); }
    ::llvm::StringRef getKey(unsigned i) const;
    ::llvm::SmallVector<::llvm::StringRef> getKeyNames() const;
    /// Index of `key`, or std::nullopt when the KJT has no such key.
    std::optional<unsigned> getKeyIndex(::llvm::StringRef key) const;
    /// The same KJT type with other keys.
    KeyedJaggedTensorType withKeys(::llvm::ArrayRef<::llvm::StringRef> keys) const;
    /// The key of `key`'s bucket `bucket` in a bucketized KJT: "key@bucket".
    static std::string getBucketKey(::llvm::StringRef key, int64_t bucket);
    /// Splits a bucket key "key@bucket" into key and bucket; std::nullopt if
    /// `bucketKey` is not one.
    static std::optional<std::pair<::llvm::StringRef, int64_t>>
    parseBucketKey(::llvm::StringRef bucketKey);
  }];
}

def Ember_KeyedTensorType : Ember_Type<"KeyedTensor", "keyed_tensor"> {
  let summary = "pooled embeddings [B, sum(D)] with key to column range";
  let description = [{
    TorchRec's `KeyedTensor`: a dense `[B, D_0 + D_1 + ...]` tensor whose
    column range `[D_0 + ... + D_{i-1}, ... + D_i)` belongs to key `i`.

    ```mlir
    !ember.keyed_tensor<["user" : 16, "item" : 32], f32>   // [B, 48]
    ```
    Keys must be non-empty and unique, dims positive.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$keys,
                        ArrayRefParameter<"int64_t">:$dims,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<::llvm::StringRef>":$keys,
                     "::llvm::ArrayRef<int64_t>":$dims,
                     "::mlir::Type":$elementType)>
  ];
  let extraClassDeclaration = [{
    unsigned getNumKeys() const { return getKeys().size(); }
    ::llvm::StringRef getKey(unsigned i) const;
    ::llvm::SmallVector<::llvm::StringRef> getKeyNames() const;
    std::optional<unsigned> getKeyIndex(::llvm::StringRef key) const;
    /// Sum of the per-key dims: the number of columns.
    int64_t getTotalDim() const;
    /// First column of key `i`.
    int64_t getColumnOffset(unsigned i) const;
    /// The dense values type: tensor<? x totalDim x elementType>.
    ::mlir::RankedTensorType getValuesType() const;
  }];
}

def Ember_AwaitableType : Ember_Type<"Awaitable", "awaitable"> {
  let summary = "the pending result of an asynchronous op";
  let description = [{
    `!ember.awaitable<T>` is produced by an asynchronous op (a collective's
    start); a wait op turns it into the `T` value. Keeping start and wait apart
    lets the scheduler overlap communication with compute.
  }];
  let parameters = (ins "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $valueType `>`";
}

def Ember_TableType : Ember_Type<"Table", "table"> {
  let summary = "an embedding table: rows x dim in a storage format";
  let description = [{
    `!ember.table<1000x64, f32>` is a table of 1000 rows of dim 64. Formats:
    `f32`, `f16`, `bf16`, and the row-wise quantized `int8_rowwise` (each row is
    `dim` uint8 codes then an f32 scale and an f32 bias: value = q * scale +
    bias; `dim + 8` bytes) and `int4_rowwise` (two codes per byte, low nibble
    first, then f32 scale and bias; `dim / 2 + 8` bytes; `dim` must be even).
    Lookups always produce the dequantized values.
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$dim,
                        "::mlir::ember::TableFormat":$format);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isQuantized() const;
    /// The float type of a row after lookup: f32 for quantized formats.
    ::mlir::Type getElementType() const;
    /// The storage tensor of the whole table: tensor<rows x dim x f32/f16/bf16>
    /// or, for the row-wise quantized formats, tensor<rows x rowBytes x i8>.
    ::mlir::RankedTensorType getStorageType() const;
    /// Bytes of one stored row (including scale and bias).
    int64_t getRowBytes() const;
  }];
}

def Ember_MutableTensorType : Ember_Type<"MutableTensor", "mut"> {
  let summary = "a tensor with reference semantics, before functionalization";
  let description = [{
    `!ember.mut<tensor<4x8xf32>>` is a buffer (or a view into one) that ops can
    write in place, like torch-mlir's non-value tensors. Frontends produce it
    for in-place ops and writes through slices; the functionalize pass turns
    every use into value-semantics tensors. See the mutation model in
    docs/dialect.md.
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensorType);
  let assemblyFormat = "`<` $tensorType `>`";
}

#endif // EMBER_TYPES_TD
