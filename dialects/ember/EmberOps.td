//===- EmberOps.td - Ember operations ------------------------*- tablegen -*-===//

#ifndef EMBER_OPS_TD
#define EMBER_OPS_TD

include "ember/EmberDialect.td"
include "ember/EmberTypes.td"
include "ember/EmberAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Ember_JaggedValuesOp : Ember_Op<"jagged.values", [Pure]> {
  let summary = "the flat values tensor of a jagged tensor";
  let arguments = (ins Ember_JaggedTensorType:$input);
  let results = (outs AnyRankedTensor:$values);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($values)";
}

#endif // EMBER_OPS_TD
