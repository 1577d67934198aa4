//===- EmberAttrs.td - Ember attributes and enums -------------*- tablegen -*-===//

#ifndef EMBER_ATTRS_TD
#define EMBER_ATTRS_TD

include "ember/EmberDialect.td"
include "mlir/IR/EnumAttr.td"

def Ember_PoolingSum  : I32EnumAttrCase<"sum", 0>;
def Ember_PoolingMean : I32EnumAttrCase<"mean", 1>;
def Ember_PoolingMax  : I32EnumAttrCase<"max", 2>;
def Ember_PoolingModeEnum : I32EnumAttr<"PoolingMode", "how a bag of rows is reduced",
    [Ember_PoolingSum, Ember_PoolingMean, Ember_PoolingMax]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_PoolingModeAttr : EnumAttr<Ember_Dialect, Ember_PoolingModeEnum, "pooling">;

#endif // EMBER_ATTRS_TD
