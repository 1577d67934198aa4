//===- EmberJaggedOps.td - jagged, KJT and keyed tensor ops --*- tablegen -*-===//
//
// Construction, accessors and restructuring of jagged tensors, keyed jagged
// tensors (KJT) and keyed tensors.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_JAGGED_OPS_TD
#define EMBER_JAGGED_OPS_TD

include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Jagged tensors
//===----------------------------------------------------------------------===//

def Ember_JaggedCreateOp : Ember_Op<"jagged.create", [Pure]> {
  let summary = "a jagged tensor from its values and offsets";
  let description = [{
    `values` is `[N, dense...]` with the result's element type and dense
    dims; `offsets` is `[B + 1]` of `i64`.

    ```mlir
    %j = ember.jagged.create %values, %offsets
        : tensor<?x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$values, 1DTensorOf<[I64]>:$offsets);
  let results = (outs Ember_JaggedTensorType:$result);
  let assemblyFormat = [{
    $values `,` $offsets attr-dict `:` type($values) `,` type($offsets)
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_JaggedValuesOp : Ember_Op<"jagged.values", [Pure]> {
  let summary = "the flat values tensor of a jagged tensor";
  let description = [{
    ```mlir
    %v = ember.jagged.values %j : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
    ```
    Folds `jagged.values(jagged.create(%v, %o))` to `%v`.
  }];
  let arguments = (ins Ember_JaggedTensorType:$input);
  let results = (outs AnyRankedTensor:$values);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($values)";
  let builders = [OpBuilder<(ins "::mlir::Value":$input)>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_JaggedOffsetsOp : Ember_Op<"jagged.offsets", [Pure]> {
  let summary = "the offsets tensor ([B + 1] x i64) of a jagged tensor";
  let description = [{
    ```mlir
    %o = ember.jagged.offsets %j : !ember.jagged<f32, [4]> -> tensor<?xi64>
    ```
    Folds `jagged.offsets(jagged.create(%v, %o))` to `%o`.
  }];
  let arguments = (ins Ember_JaggedTensorType:$input);
  let results = (outs 1DTensorOf<[I64]>:$offsets);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($offsets)";
  let hasFolder = 1;
}

def Ember_JaggedToPaddedOp : Ember_Op<"jagged.to_padded", [Pure]> {
  let summary = "a dense [B, max_length, dense...] tensor from a jagged one";
  let description = [{
    Row `b` is copied to `result[b, 0 .. min(len_b, max_length))`; the rest is
    `padding`. Longer rows are truncated.

    ```mlir
    %p = ember.jagged.to_padded %j max_length = 8 padding = 0.0 : f32
        : !ember.jagged<f32, [4]> -> tensor<?x8x4xf32>
    ```
  }];
  let arguments = (ins Ember_JaggedTensorType:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$max_length,
                       TypedAttrInterface:$padding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `max_length` `=` $max_length `padding` `=` $padding attr-dict `:`
    qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ember_JaggedSumOp : Ember_Op<"jagged.sum", [Pure]> {
  let summary = "the sum of each row's first max_length values";
  let description = [{
    Row `b` of the result is the sum of values `offsets[b] .. offsets[b] +
    min(len_b, max_length)` of the jagged input: what `reduce_sum` over dim 1
    of `jagged.to_padded` with zero padding computes (a sequence model's
    `to_padded_dense(L).sum(1)` / `.mean(1)`), without the padded tensor.
    `ember-raise-dense-ops` makes it of that pattern. f32 only.

    ```mlir
    %s = ember.jagged.sum %j max_length = 8
        : !ember.jagged<f32, [4]> -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Ember_JaggedTensorType:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$max_length);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `max_length` `=` $max_length attr-dict `:`
    qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ember_JaggedFromPaddedOp : Ember_Op<"jagged.from_padded", [Pure]> {
  let summary = "a jagged tensor from a padded [B, L, dense...] tensor and offsets";
  let description = [{
    Row `b` of the result is `padded[b, 0 .. offsets[b + 1] - offsets[b])`;
    every row length must be at most `L`.

    ```mlir
    %j = ember.jagged.from_padded %p, %offsets
        : tensor<?x8x4xf32>, tensor<?xi64> -> !ember.jagged<f32, [4]>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$padded, 1DTensorOf<[I64]>:$offsets);
  let results = (outs Ember_JaggedTensorType:$result);
  let assemblyFormat = [{
    $padded `,` $offsets attr-dict `:` type($padded) `,` type($offsets)
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Keyed jagged tensors
//===----------------------------------------------------------------------===//

def Ember_KJTCreateOp : Ember_Op<"kjt.create", [Pure, AttrSizedOperandSegments]> {
  let summary = "a KJT from values and lengths and/or offsets";
  let description = [{
    `values` is `[N]` of the KJT's value type. `lengths` (`[K * B]`, or
    `[sum(batch_sizes)]` for a variable-batch KJT) and/or `offsets`
    (`[K * B + 1]`) have its length type; at least one of them is given.
    `weights` (`[N]`, f32) is given exactly when the type is `weighted`;
    `batch_sizes` (`[K]`, i32 or i64) exactly when it is `variable_batch`.

    ```mlir
    %k = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>)
        -> !ember.kjt<["user", "item"], values = i64, lengths = i32>
    ```
  }];
  let arguments = (ins 1DTensorOf<[I32, I64]>:$values,
                       Optional<1DTensorOf<[I32, I64]>>:$lengths,
                       Optional<1DTensorOf<[I32, I64]>>:$offsets,
                       Optional<1DTensorOf<[F32]>>:$weights,
                       Optional<1DTensorOf<[I32, I64]>>:$batch_sizes);
  let results = (outs Ember_KeyedJaggedTensorType:$result);
  let assemblyFormat = [{
    `values` `(` $values `:` type($values) `)`
    (`lengths` `(` $lengths^ `:` type($lengths) `)`)?
    (`offsets` `(` $offsets^ `:` type($offsets) `)`)?
    (`weights` `(` $weights^ `:` type($weights) `)`)?
    (`batch_sizes` `(` $batch_sizes^ `:` type($batch_sizes) `)`)?
    attr-dict `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_KJTFromBagsOp : Ember_Op<"kjt.from_bags",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "a KJT from per-feature (ids, offsets) bags, as nn.EmbeddingBag takes them";
  let description = [{
    Feature `i` of the result (its key `i`) holds the bags of
    `values[i]` delimited by `offsets[i]` in `nn.EmbeddingBag`'s form: with
    `include_last_offset[i]` the offsets have `B + 1` entries, otherwise `B`
    and the last bag ends at the end of `values[i]`. Every feature must have
    the same batch size B. The result's values are the features' values one
    after the other and its lengths are key-major (`[K * B]`), converted to
    the KJT's length type; `weights` (all features or none, f32) become the
    KJT's per-value weights. With `num_rows`, the ids of key `i` must lie in
    `[0, num_rows[i])` (checked at run time, an error naming the key and the
    position): the partitioning pass gives each key its table's rows, so an
    out-of-range id fails before it is bucketized or sent. This is how the
    partitioning pass turns the
    embedding bags of a model with dense id inputs into the one KJT that the
    input all-to-all sends (TorchRec builds the same KJT in Python).

    ```mlir
    %k = ember.kjt.from_bags values(%a, %b : tensor<?xi64>, tensor<?xi64>)
        offsets(%oa, %ob : tensor<?xi64>, tensor<?xi64>)
        include_last_offset = [false, true]
        -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
    ```
  }];
  let arguments = (ins Variadic<1DTensorOf<[I32, I64]>>:$values,
                       Variadic<1DTensorOf<[I32, I64]>>:$offsets,
                       Variadic<1DTensorOf<[F32]>>:$weights,
                       DenseBoolArrayAttr:$include_last_offset,
                       OptionalAttr<DenseI64ArrayAttr>:$num_rows);
  let results = (outs Ember_KeyedJaggedTensorType:$result);
  let assemblyFormat = [{
    `values` `(` $values `:` type($values) `)`
    `offsets` `(` $offsets `:` type($offsets) `)`
    (`weights` `(` $weights^ `:` type($weights) `)`)?
    `include_last_offset` `=` $include_last_offset
    (`num_rows` `=` $num_rows^)?
    attr-dict `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

class Ember_KJTAccessorOp<string mnemonic, string what, list<Trait> traits = []>
    : Ember_Op<"kjt." # mnemonic, !listconcat([Pure], traits)> {
  let summary = "the " # what # " of a KJT";
  let arguments = (ins Ember_KeyedJaggedTensorType:$input);
  let results = (outs 1DTensorOf<[AnyInteger, F32]>:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($result)";
  // Builds the accessor with a dynamic-size result of the right element type.
  let builders = [OpBuilder<(ins "::mlir::Value":$input)>];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_KJTValuesOp : Ember_KJTAccessorOp<"values", "values ([N] ids)"> {
  let description = [{
    ```mlir
    %v = ember.kjt.values %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi64>
    ```
    Folds to the `values` operand of a `kjt.create`.
  }];
}
def Ember_KJTLengthsOp : Ember_KJTAccessorOp<"lengths", "lengths (key-major, one per bag)"> {
  let description = [{
    ```mlir
    %l = ember.kjt.lengths %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi32>
    ```
    Folds to the `lengths` operand of a `kjt.create` that has one.
  }];
}
def Ember_KJTOffsetsOp : Ember_KJTAccessorOp<"offsets", "offsets (exclusive prefix sums of the lengths, one more entry)"> {
  let description = [{
    ```mlir
    %o = ember.kjt.offsets %k : !ember.kjt<["a"], values = i64, lengths = i32> -> tensor<?xi32>
    ```
    Folds to the `offsets` operand of a `kjt.create` that has one. The
    result has the lengths' element type, or i64 (what a jagged tensor's
    offsets are) for i32 lengths.
  }];
}
def Ember_KJTWeightsOp : Ember_KJTAccessorOp<"weights", "per-value weights (weighted KJTs only)"> {
  let description = [{
    ```mlir
    %w = ember.kjt.weights %k : !ember.kjt<["a"], values = i64, lengths = i32, weighted> -> tensor<?xf32>
    ```
  }];
}

def Ember_KJTStrideOp : Ember_Op<"kjt.stride", [Pure]> {
  let summary = "the batch size B of a KJT (lengths size / number of keys)";
  let description = [{
    For a variable-batch KJT, the largest per-key batch size.

    ```mlir
    %b = ember.kjt.stride %k : !ember.kjt<["a"], values = i64, lengths = i32>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input);
  let results = (outs Index:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def Ember_KJTPermuteOp : Ember_Op<"kjt.permute", [Pure]> {
  let summary = "reorders (and may drop) the keys of a KJT";
  let description = [{
    Result key `i` is input key `permutation[i]`, with its lengths, values and
    weights. Keys may be dropped; a key may not appear twice, since KJT keys
    are unique. The result type's keys must follow the permutation.

    Folds: the identity permutation returns the input; a permute of a permute
    composes into one.

    ```mlir
    %p = ember.kjt.permute %k [1, 0]
        : !ember.kjt<["a", "b"], values = i64, lengths = i32>
        -> !ember.kjt<["b", "a"], values = i64, lengths = i32>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Ember_KeyedJaggedTensorType:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
  let builders = [
    // Infers the result type (the input's keys in permutation order).
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$permutation)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_KJTSplitOp : Ember_Op<"kjt.split", [Pure]> {
  let summary = "splits a KJT into several by consecutive key counts";
  let description = [{
    Result `j` holds the next `key_counts[j]` keys. The counts are
    non-negative and sum to the number of keys.

    Folds: a split into one part is the input. A split of a `kjt.concat`
    whose parts it re-creates is replaced by the concat's operands.

    ```mlir
    %a, %b = ember.kjt.split %k [2, 1]
        : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
        -> !ember.kjt<["a", "b"], values = i64, lengths = i32>,
           !ember.kjt<["c"], values = i64, lengths = i32>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input,
                       DenseI64ArrayAttr:$key_counts);
  let results = (outs Variadic<Ember_KeyedJaggedTensorType>:$results);
  let assemblyFormat = [{
    $input $key_counts attr-dict `:` qualified(type($input)) `->`
    qualified(type($results))
  }];
  let builders = [
    // Infers the result types (consecutive runs of the input's keys).
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$keyCounts)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_KJTConcatOp : Ember_Op<"kjt.concat", [Pure]> {
  let summary = "concatenates the keys of several KJTs";
  let description = [{
    The result's keys are the inputs' keys in order (they must stay unique);
    all inputs share value/length types and the weighted and variable_batch
    flags. Without variable batch, every input must have the same batch size
    (checked at run time).

    Folds: a concat of one input is that input; a concat of all the results
    of one `kjt.split`, in order, is the split's input.

    ```mlir
    %k = ember.kjt.concat %a, %b
        : !ember.kjt<["a"], values = i64, lengths = i32>,
          !ember.kjt<["b"], values = i64, lengths = i32>
        -> !ember.kjt<["a", "b"], values = i64, lengths = i32>
    ```
  }];
  let arguments = (ins Variadic<Ember_KeyedJaggedTensorType>:$inputs);
  let results = (outs Ember_KeyedJaggedTensorType:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` qualified(type($inputs)) `->` qualified(type($result))
  }];
  let builders = [
    // Infers the result type (all inputs' keys in order).
    OpBuilder<(ins "::mlir::ValueRange":$inputs)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_KJTBucketizeOp : Ember_Op<"kjt.bucketize", [Pure]> {
  let summary = "splits each key's ids into row-wise shard buckets";
  let description = [{
    Row-wise sharding input distribution (TorchRec's
    `bucketize_kjt_before_all2all`): id `v` of key `k` goes to bucket
    `b = min(v / block_sizes[k], num_buckets - 1)` and becomes the local row
    `v - b * block_sizes[k]` of that bucket's shard.

    The bucketized KJT is **bucket-major**: its keys are `"<key>@<bucket>"`
    for bucket 0 (all keys in input order), then bucket 1, and so on, so its
    lengths are `[num_buckets][K][B]` and a KJT all-to-all can send the first
    K keys to rank 0, the next K to rank 1, ... (key counts `[K] * num_buckets`).
    Within a bag, ids keep their input order. Weights follow their ids.

    The second result, the unbucketize permutation (`[N]`, i64), maps each
    input value position to its position in the bucketized values; it puts
    looked-up rows back in input order after the return all-to-all.

    ```mlir
    %b, %perm = ember.kjt.bucketize %k block_sizes = [500] num_buckets = 2
        : !ember.kjt<["a"], values = i64, lengths = i32>
        -> !ember.kjt<["a@0", "a@1"], values = i64, lengths = i32>, tensor<?xi64>
    ```
  }];
  let arguments = (ins Ember_KeyedJaggedTensorType:$input,
                       DenseI64ArrayAttr:$block_sizes,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_buckets);
  let results = (outs Ember_KeyedJaggedTensorType:$result,
                      1DTensorOf<[I64]>:$unbucketize_permutation);
  let assemblyFormat = [{
    $input `block_sizes` `=` $block_sizes `num_buckets` `=` $num_buckets
    attr-dict `:` qualified(type($input)) `->` qualified(type($result)) `,`
    type($unbucketize_permutation)
  }];
  let builders = [
    // Infers the bucket-major result type and a dynamic permutation type.
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$blockSizes,
                   "int64_t":$numBuckets)>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Keyed tensors
//===----------------------------------------------------------------------===//

def Ember_KeyedTensorCreateOp : Ember_Op<"keyed_tensor.create", [Pure]> {
  let summary = "a keyed tensor from its [B, sum(D)] values";
  let description = [{
    The keys and per-key dims come from the result type.

    ```mlir
    %kt = ember.keyed_tensor.create %v : tensor<?x48xf32>
        -> !ember.keyed_tensor<["user" : 16, "item" : 32], f32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$values);
  let results = (outs Ember_KeyedTensorType:$result);
  let assemblyFormat = [{
    $values attr-dict `:` type($values) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_KeyedTensorValuesOp : Ember_Op<"keyed_tensor.values", [Pure]> {
  let summary = "the [B, sum(D)] values of a keyed tensor";
  let description = [{
    ```mlir
    %v = ember.keyed_tensor.values %kt
        : !ember.keyed_tensor<["user" : 16, "item" : 32], f32> -> tensor<?x48xf32>
    ```
    Folds `keyed_tensor.values(keyed_tensor.create(%v))` to `%v`.
  }];
  let arguments = (ins Ember_KeyedTensorType:$input);
  let results = (outs 2DTensorOf<[AnyFloat]>:$values);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($values)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ember_KeyedTensorGetOp : Ember_Op<"keyed_tensor.get", [Pure]> {
  let summary = "the [B, D] columns of one key of a keyed tensor";
  let description = [{
    ```mlir
    %u = ember.keyed_tensor.get %kt["user"]
        : !ember.keyed_tensor<["user" : 16, "item" : 32], f32> -> tensor<?x16xf32>
    ```
    Folds: a get of a `keyed_tensor.regroup` reads the key from the regroup
    input that holds it.
  }];
  let arguments = (ins Ember_KeyedTensorType:$input, StrAttr:$key);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `[` $key `]` attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let builders = [
    // Infers the [?, D] result type of `key`.
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::StringRef":$key)>
  ];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Ember_KeyedTensorRegroupOp : Ember_Op<"keyed_tensor.regroup", [Pure]> {
  let summary = "gathers keys of several keyed tensors into one, in a new order";
  let description = [{
    TorchRec's `KeyedTensor.regroup`/concat: each result key is taken from
    the one input that has it (its dim must match). All inputs share the
    element type and batch size.

    Folds: a regroup of one input into its own type is that input.

    ```mlir
    %r = ember.keyed_tensor.regroup %a, %b
        : !ember.keyed_tensor<["u" : 16], f32>, !ember.keyed_tensor<["i" : 32], f32>
        -> !ember.keyed_tensor<["i" : 32, "u" : 16], f32>
    ```
  }];
  let arguments = (ins Variadic<Ember_KeyedTensorType>:$inputs);
  let results = (outs Ember_KeyedTensorType:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` qualified(type($inputs)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // EMBER_JAGGED_OPS_TD
