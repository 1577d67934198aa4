//===- EmberJaggedOps.td - jagged, KJT and keyed tensor ops --*- tablegen -*-===//

#ifndef EMBER_JAGGED_OPS_TD
#define EMBER_JAGGED_OPS_TD

def Ember_JaggedValuesOp : Ember_Op<"jagged.values", [Pure]> {
  let summary = "the flat values tensor of a jagged tensor";
  let arguments = (ins Ember_JaggedTensorType:$input);
  let results = (outs AnyRankedTensor:$values);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` type($values)";
}

#endif // EMBER_JAGGED_OPS_TD
