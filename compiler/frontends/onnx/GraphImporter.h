//===- GraphImporter.h - Walk an ONNX graph into a func.func -----*- C++
//-*-===//

#ifndef EMBER_FRONTENDS_ONNX_GRAPHIMPORTER_H
#define EMBER_FRONTENDS_ONNX_GRAPHIMPORTER_H

#include "frontends/onnx/ImportContext.h"
#include "frontends/onnx/OnnxModelLoader.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

/// Imports the model's main graph as `func.func @<name>` into `module`: one
/// argument per graph input that is not an initializer, initializers as
/// constants, nodes in order, one result per graph output.
/// The initializers' data is released from `graph` once it is converted;
/// those in `mapped` become constants over their mapped external data.
FailureOr<func::FuncOp> importMainGraph(::onnx::GraphProto &graph,
                                        ModuleOp module, ImportContext &ctx,
                                        llvm::StringRef name,
                                        const MappedTensors &mapped = {});

/// Imports the nodes of `graph` at the builder's insertion point (used for
/// the main graph and for subgraph bodies).
LogicalResult importNodes(const ::onnx::GraphProto &graph, ImportContext &ctx);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_GRAPHIMPORTER_H
