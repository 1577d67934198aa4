//===- EmberDenseOps.td - dense computations of one kernel each -*- tablegen -*-===//
//
// Dense computations the runtime runs as one kernel each
// (docs/kernels-dense.md): softmax, layer_norm, linear (nn.Linear with its
// bias and activation), the DLRM dot interaction and DCN-v2 cross layers.
// Frontends decompose them into tosa ops; the `ember-raise-dense-ops` pass
// puts these ops in place of the decompositions, and the plan emitter lowers
// each one to its kernel, operands and attributes one to one.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_DENSE_OPS_TD
#define EMBER_DENSE_OPS_TD

include "dialects/ember/EmberDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

defvar Ember_F32Tensor = RankedTensorOf<[F32]>;

def Ember_SoftmaxOp : Ember_Op<"softmax",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "softmax along one axis (kernel `softmax`)";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis` (ONNX Softmax from
    opset 13, `torch.softmax`). `axis` may be negative (counted from the
    back). The ONNX importer decomposes Softmax into
    `reduce_max`/`sub`/`exp`/`reduce_sum`/`reciprocal`/`mul`, which
    `ember-raise-dense-ops` turns back into this op.

    ```mlir
    %y = ember.softmax %x axis = 1 : tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Ember_F32Tensor:$input, I64Attr:$axis);
  let results = (outs Ember_F32Tensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ember_LayerNormOp : Ember_Op<"layer_norm",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the trailing dims (kernel `layer_norm`)";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias` over the dims
    `[axis, rank)` of `x`, with the biased variance (`torch.nn.LayerNorm`,
    ONNX LayerNormalization). `scale` and `bias` are optional; each is 1-D
    with as many elements as the normalized dims hold, or has the normalized
    shape. `axis` may be negative; `epsilon` is at least 0.

    ```mlir
    %y = ember.layer_norm %x scale(%g : tensor<16xf32>) bias(%b : tensor<16xf32>)
        axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
    %n = ember.layer_norm %x axis = 1 epsilon = 9.99999974E-6 : tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Ember_F32Tensor:$input,
                       Optional<Ember_F32Tensor>:$scale,
                       Optional<Ember_F32Tensor>:$bias,
                       I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs Ember_F32Tensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    `axis` `=` $axis `epsilon` `=` $epsilon attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Ember_LinearOp : Ember_Op<"linear", [Pure]> {
  let summary = "act(x · W + bias): nn.Linear with its activation (kernel `linear`)";
  let description = [{
    `x` is `[..., K]`; `weight` is `[N, K]` (PyTorch's `nn.Linear` layout,
    `transpose_weight = true`, the default) or `[K, N]`
    (`transpose_weight = false`); the optional `bias` is `[N]`. The result is
    `[..., N]`: `activation(x · Wᵀ + bias)` with `activation` one of `"none"`
    (the default), `"relu"`, `"sigmoid"`, `"tanh"`.

    `ember-raise-dense-ops` makes one of the importer's Gemm chains
    (`expand_shape`, `tosa.matmul` by a constant, `collapse_shape`, a bias
    `tosa.add`, then ReLU `tosa.clamp`, `tosa.sigmoid` or `tosa.tanh`) with
    the weight as `[K, N]`.

    ```mlir
    %y = ember.linear %x, %w, %b {activation = "relu", transpose_weight = false}
        : tensor<?x5xf32>, tensor<5x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins Ember_F32Tensor:$input, Ember_F32Tensor:$weight,
                       Optional<Ember_F32Tensor>:$bias,
                       DefaultValuedAttr<BoolAttr, "true">:$transpose_weight,
                       DefaultValuedStrAttr<StrAttr, "none">:$activation);
  let results = (outs Ember_F32Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,`
    type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ember_DotInteractionOp : Ember_Op<"dot_interaction", [Pure]> {
  let summary = "the DLRM pairwise dot interaction (kernel `dot_interaction`)";
  let description = [{
    `dense` is `[B, D]`, `sparse` is `[B, F·D]` (F = `num_features` pooled
    embeddings side by side). With `T = concat(dense, sparse)` viewed as
    `[B, F+1, D]` and `Z = T·Tᵀ` per sample, the result is `[B, D + P]`:
    `dense` followed by the P pairs of `Z` in `pair_order`:

    * `"dlrm"` (the default): the lower triangle row-major (i > j, or
      i >= j with `self_interaction`), as facebookresearch/dlrm's `li`/`lj`;
    * `"torchrec"`: the upper triangle row-major (j > i, or j >= i with
      `self_interaction`), as TorchRec's `InteractionArch`.

    P = (F+1)F/2, or (F+1)(F+2)/2 with `self_interaction`.

    ```mlir
    %r = ember.dot_interaction %x, %e {num_features = 3 : i64, pair_order = "dlrm"}
        : tensor<?x16xf32>, tensor<?x48xf32> -> tensor<?x22xf32>
    ```
  }];
  let arguments = (ins Ember_F32Tensor:$dense, Ember_F32Tensor:$sparse,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$num_features,
                       DefaultValuedAttr<BoolAttr, "false">:$self_interaction,
                       DefaultValuedStrAttr<StrAttr, "dlrm">:$pair_order);
  let results = (outs Ember_F32Tensor:$result);
  let assemblyFormat = [{
    $dense `,` $sparse attr-dict `:` type($dense) `,` type($sparse) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Ember_DcnCrossOp : Ember_Op<"dcn_cross",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["x0", "xl", "result"]>]> {
  let summary = "one DCN-v2 cross layer (kernel `dcn_cross`)";
  let description = [{
    TorchRec's `CrossNet` / `LowRankCrossNet`, one layer: `x0` and `xl` are
    `[B, D]`; with one weight `W` `[D, D]` (full rank) the result is
    `x0 * (xl · Wᵀ + bias) + xl`; with two, `V` `[r, D]` then `W` `[D, r]`
    (low rank), `x0 * ((xl · Vᵀ) · Wᵀ + bias) + xl`. The weights are in
    TorchRec's `[out, in]` layout; the optional `bias` is `[D]` (or `[D, 1]`).

    ```mlir
    %y = ember.dcn_cross %x0, %xl weights(%w : tensor<8x8xf32>)
        bias(%b : tensor<8xf32>) : tensor<?x8xf32>
    %z = ember.dcn_cross %x0, %y weights(%v, %u : tensor<3x8xf32>, tensor<8x3xf32>)
        : tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Ember_F32Tensor:$x0, Ember_F32Tensor:$xl,
                       Variadic<Ember_F32Tensor>:$weights,
                       Optional<Ember_F32Tensor>:$bias);
  let results = (outs Ember_F32Tensor:$result);
  let assemblyFormat = [{
    $x0 `,` $xl `weights` `(` $weights `:` type($weights) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:` type($result)
  }];
  let extraClassDeclaration = [{
    /// True with two weights (V, W): a low-rank layer.
    bool isLowRank() { return getWeights().size() == 2; }
  }];
  let hasVerifier = 1;
}

#endif // EMBER_DENSE_OPS_TD
