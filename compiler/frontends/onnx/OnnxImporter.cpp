//===- OnnxImporter.cpp - Import an ONNX model into Ember IR --------------===//

#include "frontends/onnx/OnnxImporter.h"

#include "dialects/ember/EmberDialect.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/OnnxModelLoader.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <onnx/onnx_pb.h>

namespace mlir {
namespace ember {
namespace onnx_importer {

/// Versions of the default domain whose op semantics Ember implements.
static constexpr int64_t kMinOpset = 13;
static constexpr int64_t kMaxOpset = 18;

void registerOnnxImportDialects(DialectRegistry &registry) {
  registry.insert<EmberDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, tosa::TosaDialect, scf::SCFDialect>();
}

/// Erases ops without uses or effects (shape tensors only the import-time
/// shape tracking needed, unused initializers), loop bodies included.
static void removeDeadOps(ModuleOp module) {
  bool changed = true;
  while (changed) {
    changed = false;
    module.walk<WalkOrder::PostOrder, ReverseIterator>([&](Operation *op) {
      if (isa<func::FuncOp, ModuleOp>(op) || !isOpTriviallyDead(op))
        return;
      op->erase();
      changed = true;
    });
  }
}

OwningOpRef<ModuleOp> importOnnxFile(llvm::StringRef path, MLIRContext *context,
                                     const OnnxImportOptions &options) {
  DialectRegistry registry;
  registerOnnxImportDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();

  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  ::onnx::ModelProto model;
  MappedTensors mapped;
  if (failed(readOnnxModel(path, model, fileLoc, mapped)))
    return nullptr;
  if (options.runChecker &&
      failed(checkOnnxModel(model, path, !mapped.empty(), fileLoc)))
    return nullptr;
  if (options.runShapeInference && failed(checkOnnxTypes(model, fileLoc)))
    return nullptr;

  int64_t opset = -1;
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = import.version();
  if (opset < kMinOpset || opset > kMaxOpset) {
    emitError(fileLoc) << "the model imports ONNX opset " << opset
                       << "; Ember supports opsets " << kMinOpset << " to "
                       << kMaxOpset;
    return nullptr;
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder builder(context);
  ImportContext ctx(builder, fileLoc, opset);
  if (failed(importMainGraph(*model.mutable_graph(), *module, ctx,
                             options.functionName, mapped)))
    return nullptr;
  removeDeadOps(*module);
  // Merge the repeated constants the converters create (zero shifts, zero
  // points, shape constants); nothing else is rewritten.
  PassManager pm(context);
  pm.addPass(createCSEPass());
  if (failed(pm.run(*module)))
    return nullptr;
  if (failed(verify(*module))) {
    emitError(fileLoc) << "internal error: the IR imported from '" << path
                       << "' does not verify";
    return nullptr;
  }
  return module;
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
