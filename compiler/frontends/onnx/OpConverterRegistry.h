//===- OpConverterRegistry.h - ONNX op type -> converter ---------*- C++
//-*-===//
//
// Each op family registers its converters with the attributes they
// understand; the graph walk rejects any other attribute, so an attribute
// Ember would silently ignore is always an error naming the node.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_FRONTENDS_ONNX_OPCONVERTERREGISTRY_H
#define EMBER_FRONTENDS_ONNX_OPCONVERTERREGISTRY_H

#include "frontends/onnx/ImportContext.h"
#include "llvm/ADT/StringMap.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace mlir {
namespace ember {
namespace onnx_importer {

/// Imports the current node of the context; defines its outputs.
using ConvertFn = LogicalResult (*)(ImportContext &ctx);

struct OpConverter {
  ConvertFn convert = nullptr;
  std::vector<std::string> attributes;
  bool acceptsAttribute(llvm::StringRef name) const;
};

/// The ONNX domain ("" or "ai.onnx") and Ember's custom domain.
inline constexpr llvm::StringLiteral kOnnxDomain = "";
inline constexpr llvm::StringLiteral kEmberDomain = "ember";

class OpConverterRegistry {
public:
  void add(llvm::StringRef domain, llvm::StringRef opType, ConvertFn convert,
           std::initializer_list<const char *> attributes = {});
  /// Null when the op is not supported. `domain` "ai.onnx" is "".
  const OpConverter *lookup(llvm::StringRef domain,
                            llvm::StringRef opType) const;
  static bool isKnownDomain(llvm::StringRef domain);

  /// The registry with every op family.
  static const OpConverterRegistry &get();

private:
  llvm::StringMap<OpConverter> converters; // key: "<domain>::<opType>"
};

// One function per op family (one .cpp each).
void registerElementwiseConverters(OpConverterRegistry &registry);
void registerMatMulConverters(OpConverterRegistry &registry);
void registerNormalizationConverters(OpConverterRegistry &registry);
void registerReductionConverters(OpConverterRegistry &registry);
void registerShapeConverters(OpConverterRegistry &registry);
void registerGatherScatterConverters(OpConverterRegistry &registry);
void registerConstantConverters(OpConverterRegistry &registry);
void registerLoopConverters(OpConverterRegistry &registry);
void registerEmberDomainConverters(OpConverterRegistry &registry);
void registerEmberKjtConverters(OpConverterRegistry &registry);
void registerEmberSequenceConverters(OpConverterRegistry &registry);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_OPCONVERTERREGISTRY_H
