//===- EmberAttrs.td - Ember attributes and enums -------------*- tablegen -*-===//
//
// Enums shared by the Ember ops. Each prints as its bare keyword inside an op
// (`pooling = sum`) and as `#ember<pooling sum>` on its own.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_ATTRS_TD
#define EMBER_ATTRS_TD

include "dialects/ember/EmberDialect.td"
include "mlir/IR/EnumAttr.td"

class Ember_EnumAttr<EnumAttrInfo enumInfo, string name>
    : EnumAttr<Ember_Dialect, enumInfo, name> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// PoolingMode
//===----------------------------------------------------------------------===//

def Ember_PoolingSum  : I32EnumAttrCase<"sum", 0>;
def Ember_PoolingMean : I32EnumAttrCase<"mean", 1>;
def Ember_PoolingMax  : I32EnumAttrCase<"max", 2>;
def Ember_PoolingModeEnum : I32EnumAttr<"PoolingMode", "how a bag of rows is reduced",
    [Ember_PoolingSum, Ember_PoolingMean, Ember_PoolingMax]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_PoolingModeAttr : Ember_EnumAttr<Ember_PoolingModeEnum, "pooling"> {
  let summary = "pooling of an embedding bag: sum, mean or max";
}
def Ember_PoolingModeArrayAttr
    : TypedArrayAttrBase<Ember_PoolingModeAttr, "array of pooling modes">;

//===----------------------------------------------------------------------===//
// TableFormat
//===----------------------------------------------------------------------===//

def Ember_TableF32  : I32EnumAttrCase<"f32", 0>;
def Ember_TableF16  : I32EnumAttrCase<"f16", 1>;
def Ember_TableBF16 : I32EnumAttrCase<"bf16", 2>;
def Ember_TableInt8RowWise : I32EnumAttrCase<"int8_rowwise", 3>;
def Ember_TableInt4RowWise : I32EnumAttrCase<"int4_rowwise", 4>;
def Ember_TableFormatEnum : I32EnumAttr<"TableFormat",
    "storage format of an embedding table row",
    [Ember_TableF32, Ember_TableF16, Ember_TableBF16, Ember_TableInt8RowWise,
     Ember_TableInt4RowWise]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_TableFormatAttr : Ember_EnumAttr<Ember_TableFormatEnum, "table_format"> {
  let summary = "storage format of a table: f32, f16, bf16, int8_rowwise, int4_rowwise";
}

//===----------------------------------------------------------------------===//
// CommCodec
//===----------------------------------------------------------------------===//

def Ember_CodecNone : I32EnumAttrCase<"none", 0>;
def Ember_CodecFP16 : I32EnumAttrCase<"fp16", 1>;
def Ember_CodecBF16 : I32EnumAttrCase<"bf16", 2>;
def Ember_CodecFP8  : I32EnumAttrCase<"fp8", 3>;
def Ember_CommCodecEnum : I32EnumAttr<"CommCodec",
    "wire format of a collective's floating-point payload",
    [Ember_CodecNone, Ember_CodecFP16, Ember_CodecBF16, Ember_CodecFP8]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_CommCodecAttr : Ember_EnumAttr<Ember_CommCodecEnum, "codec"> {
  let summary = "communication codec: none, fp16, bf16 or fp8";
}

//===----------------------------------------------------------------------===//
// ReduceKind
//===----------------------------------------------------------------------===//

def Ember_ReduceSum  : I32EnumAttrCase<"sum", 0>;
def Ember_ReduceMean : I32EnumAttrCase<"mean", 1>;
def Ember_ReduceMax  : I32EnumAttrCase<"max", 2>;
def Ember_ReduceMin  : I32EnumAttrCase<"min", 3>;
def Ember_ReduceKindEnum : I32EnumAttr<"ReduceKind",
    "element-wise reduction of a collective",
    [Ember_ReduceSum, Ember_ReduceMean, Ember_ReduceMax, Ember_ReduceMin]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_ReduceKindAttr : Ember_EnumAttr<Ember_ReduceKindEnum, "reduce"> {
  let summary = "reduction of a collective: sum, mean, max or min";
}

//===----------------------------------------------------------------------===//
// ShardingType
//===----------------------------------------------------------------------===//

def Ember_ShardTableWise    : I32EnumAttrCase<"table_wise", 0>;
def Ember_ShardRowWise      : I32EnumAttrCase<"row_wise", 1>;
def Ember_ShardColumnWise   : I32EnumAttrCase<"column_wise", 2>;
def Ember_ShardTableRowWise : I32EnumAttrCase<"table_row_wise", 3>;
def Ember_ShardDataParallel : I32EnumAttrCase<"data_parallel", 4>;
def Ember_ShardingTypeEnum : I32EnumAttr<"ShardingType",
    "how an embedding table is split over ranks (TorchRec's sharding_type)",
    [Ember_ShardTableWise, Ember_ShardRowWise, Ember_ShardColumnWise,
     Ember_ShardTableRowWise, Ember_ShardDataParallel]> {
  let cppNamespace = "::mlir::ember";
  let genSpecializedAttr = 0;
}
def Ember_ShardingTypeAttr : Ember_EnumAttr<Ember_ShardingTypeEnum, "sharding_type"> {
  let summary = "sharding type of a table";
}

#endif // EMBER_ATTRS_TD
