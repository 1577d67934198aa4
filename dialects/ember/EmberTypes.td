//===- EmberTypes.td - Ember types ---------------------------*- tablegen -*-===//

#ifndef EMBER_TYPES_TD
#define EMBER_TYPES_TD

include "ember/EmberDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Ember_JaggedTensorType : Ember_Type<"JaggedTensor", "jagged"> {
  let summary = "a tensor with one ragged dimension: values plus offsets";
  let description = [{
    `!ember.jagged<f32, [4]>` has rows of varying length whose elements are
    `f32` vectors of 4 (the dense trailing dims, possibly none). It is stored as
    a values tensor `[N, 4]` and an offsets tensor `[B + 1]`.
  }];
  let parameters = (ins "Type":$elementType,
                        OptionalArrayRefParameter<"int64_t">:$denseShape);
  let assemblyFormat = "`<` $elementType (`,` `[` $denseShape^ `]`)? `>`";
}

#endif // EMBER_TYPES_TD
