//===- KjtInputs.h - Graph inputs that form a KJT ---------------*- C++ -*-===//
//
// The PyTorch frontend flattens a KJT argument into graph inputs (values,
// lengths, optional weights) that feed one ember.KJT node. After the import,
// promoteKjtInputs turns each such group into a single !ember.kjt function
// argument (named after the values input, less a ".values" suffix), so that
// the plan emitter sees a KJT input (Signature.kjt_inputs). Other readers of
// those inputs read them through ember.kjt.values/lengths/weights.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_FRONTENDS_ONNX_KJTINPUTS_H
#define EMBER_FRONTENDS_ONNX_KJTINPUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

LogicalResult promoteKjtInputs(func::FuncOp func);

} // namespace onnx_importer
} // namespace ember
} // namespace mlir

#endif // EMBER_FRONTENDS_ONNX_KJTINPUTS_H
