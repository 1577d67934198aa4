//===- OpConverterRegistry.cpp - ONNX op type -> converter ----------------===//

#include "frontends/onnx/OpConverterRegistry.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

namespace {
std::string normalizeDomain(llvm::StringRef domain) {
  return domain == "ai.onnx" ? std::string() : domain.str();
}
std::string keyOf(llvm::StringRef domain, llvm::StringRef opType) {
  return normalizeDomain(domain) + "::" + opType.str();
}
} // namespace

bool OpConverter::acceptsAttribute(llvm::StringRef name) const {
  return llvm::is_contained(attributes, name.str());
}

void OpConverterRegistry::add(llvm::StringRef domain, llvm::StringRef opType,
                              ConvertFn convert,
                              std::initializer_list<const char *> attributes) {
  OpConverter &entry = converters[keyOf(domain, opType)];
  entry.convert = convert;
  entry.attributes.assign(attributes.begin(), attributes.end());
}

const OpConverter *OpConverterRegistry::lookup(llvm::StringRef domain,
                                               llvm::StringRef opType) const {
  auto it = converters.find(keyOf(domain, opType));
  return it == converters.end() ? nullptr : &it->second;
}

bool OpConverterRegistry::isKnownDomain(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx" || domain == kEmberDomain;
}

const OpConverterRegistry &OpConverterRegistry::get() {
  static const OpConverterRegistry registry = [] {
    OpConverterRegistry r;
    registerElementwiseConverters(r);
    registerMatMulConverters(r);
    registerNormalizationConverters(r);
    registerReductionConverters(r);
    registerShapeConverters(r);
    registerGatherScatterConverters(r);
    registerConstantConverters(r);
    registerLoopConverters(r);
    registerEmberDomainConverters(r);
    registerEmberKjtConverters(r);
    registerEmberSequenceConverters(r);
    return r;
  }();
  return registry;
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
