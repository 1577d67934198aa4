//===- EmberOps.cpp - Ember operations ------------------------------------===//
//
// The generated op classes and the custom assembly directives the topic files
// share. Verifiers, folders and canonicalizations live in the topic files
// (EmberEmbeddingOps.cpp, EmberJaggedOps.cpp, EmberMutationOps.cpp, ...).
//
//===----------------------------------------------------------------------===//
#include "dialects/ember/EmberOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ember;

static ParseResult parsePoolingKeyword(OpAsmParser &parser,
                                       PoolingModeAttr &pooling) {
  StringRef name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<PoolingMode> mode = symbolizePoolingMode(name);
  if (!mode)
    return parser.emitError(loc) << "unknown pooling mode '" << name
                                 << "'; expected sum, mean or max";
  pooling = PoolingModeAttr::get(parser.getContext(), *mode);
  return success();
}

ParseResult mlir::ember::parsePoolingMode(OpAsmParser &parser,
                                          PoolingModeAttr &pooling) {
  return parsePoolingKeyword(parser, pooling);
}

void mlir::ember::printPoolingMode(OpAsmPrinter &printer, Operation *,
                                   PoolingModeAttr pooling) {
  printer << stringifyPoolingMode(pooling.getValue());
}

ParseResult mlir::ember::parsePoolingList(OpAsmParser &parser,
                                          ArrayAttr &pooling) {
  SmallVector<Attribute> modes;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       PoolingModeAttr mode;
                                       if (parsePoolingKeyword(parser, mode))
                                         return failure();
                                       modes.push_back(mode);
                                       return success();
                                     }))
    return failure();
  pooling = parser.getBuilder().getArrayAttr(modes);
  return success();
}

void mlir::ember::printPoolingList(OpAsmPrinter &printer, Operation *,
                                   ArrayAttr pooling) {
  printer << '[';
  llvm::interleaveComma(pooling, printer, [&](Attribute attr) {
    printer << stringifyPoolingMode(cast<PoolingModeAttr>(attr).getValue());
  });
  printer << ']';
}

#define GET_OP_CLASSES
#include "dialects/ember/EmberOps.cpp.inc"
