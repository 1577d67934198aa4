//===- EmberMutationOps.td - tensors with reference semantics -*- tablegen -*-===//
//
// Mutation before functionalization: buffers that in-place ops write, views
// (slices) that alias them, reads and writes. The functionalize pass rewrites
// them into value-semantics tensor ops. See "The mutation model" in
// docs/dialect.md.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_MUTATION_OPS_TD
#define EMBER_MUTATION_OPS_TD

include "mlir/Interfaces/ViewLikeInterface.td"

def Ember_MutFromTensorOp : Ember_Op<"mut.from_tensor"> {
  let summary = "a new mutable buffer holding a copy of a tensor";
  let description = [{
    Allocates a fresh buffer (aliasing nothing) initialised with `%value`.
    This is also how a clone is written: `mut.from_tensor(mut.to_tensor %x)`.

    ```mlir
    %m = ember.mut.from_tensor %t : tensor<4x8xf32> -> !ember.mut<tensor<4x8xf32>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value);
  let results = (outs Res<Ember_MutableTensorType, "the new buffer",
                          [MemAlloc, MemWrite]>:$result);
  let assemblyFormat = [{
    $value attr-dict `:` type($value) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_MutToTensorOp : Ember_Op<"mut.to_tensor"> {
  let summary = "reads the current value of a mutable tensor";
  let description = [{
    The value the buffer (or view) holds at this point of the program; later
    writes do not change the result.

    ```mlir
    %t = ember.mut.to_tensor %m : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Arg<Ember_MutableTensorType, "the buffer read",
                           [MemRead]>:$source);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source attr-dict `:` qualified(type($source)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ember_MutSliceOp : Ember_Op<"mut.slice", [Pure,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "a view aliasing a strided region of a mutable tensor";
  let description = [{
    Like `tensor.extract_slice`, but the result is a view: writes through it
    change the source buffer and writes to the source are seen through it.
    Offsets, sizes and strides are static or SSA `index` values; the result
    has the sizes as its shape (rank-preserving).

    ```mlir
    // x[:, 2:4] of x : [?, 8]
    %v = ember.mut.slice %x[0, 2] [%b, 2] [1, 1]
        : !ember.mut<tensor<?x8xf32>> -> !ember.mut<tensor<?x2xf32>>
    ```
  }];
  let arguments = (ins Ember_MutableTensorType:$source,
                       Variadic<Index>:$offsets,
                       Variadic<Index>:$sizes,
                       Variadic<Index>:$strides,
                       DenseI64ArrayAttr:$static_offsets,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides);
  let results = (outs Ember_MutableTensorType:$result);
  let assemblyFormat = [{
    $source ``
    custom<DynamicIndexList>($offsets, $static_offsets)
    custom<DynamicIndexList>($sizes, $static_sizes)
    custom<DynamicIndexList>($strides, $static_strides)
    attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Ember_MutCopyOp : Ember_Op<"mut.copy"> {
  let summary = "writes a tensor value into a mutable tensor (in place)";
  let description = [{
    Overwrites every element of `target` (a buffer or a view) with `value`;
    through a view this is `x[...] = value`. An in-place update such as
    `x.add_(y)` is a read, the value computation and a copy back:

    ```mlir
    %cur = ember.mut.to_tensor %x : !ember.mut<tensor<4x8xf32>> -> tensor<4x8xf32>
    %sum = tosa.add %cur, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ember.mut.copy %sum into %x : tensor<4x8xf32> into !ember.mut<tensor<4x8xf32>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value,
                       Arg<Ember_MutableTensorType, "the buffer written",
                           [MemWrite]>:$target);
  let assemblyFormat = [{
    $value `into` $target attr-dict `:` type($value) `into`
    qualified(type($target))
  }];
  let hasVerifier = 1;
}

#endif // EMBER_MUTATION_OPS_TD
