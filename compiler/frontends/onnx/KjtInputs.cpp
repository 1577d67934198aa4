//===- KjtInputs.cpp - Graph inputs that form a KJT -----------------------===//
//
// See KjtInputs.h.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/KjtInputs.h"

#include "dialects/ember/EmberOps.h"
#include "dialects/ember/EmberTypes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace ember {
namespace onnx_importer {

LogicalResult promoteKjtInputs(func::FuncOp func) {
  Block &entry = func.getBody().front();
  SmallVector<KJTCreateOp> creates;
  func.walk([&](KJTCreateOp op) {
    if (op->getBlock() == &entry)
      creates.push_back(op);
  });
  llvm::DenseSet<Value> claimed;
  OpBuilder b(func.getContext());
  for (KJTCreateOp create : creates) {
    if (create.getOffsets() || create.getBatchSizes() || !create.getLengths())
      continue;
    SmallVector<Value> parts = {create.getValues(), create.getLengths()};
    if (create.getWeights())
      parts.push_back(create.getWeights());
    bool eligible = true;
    for (Value v : parts) {
      auto arg = dyn_cast<BlockArgument>(v);
      eligible &= arg && arg.getOwner() == &entry && !claimed.contains(v);
    }
    if (!eligible ||
        llvm::SmallDenseSet<Value>(parts.begin(), parts.end()).size() !=
            parts.size())
      continue;
    for (Value v : parts)
      claimed.insert(v);
    unsigned valuesIndex = cast<BlockArgument>(parts[0]).getArgNumber();
    std::string name = "kjt";
    if (auto n = func.getArgAttrOfType<StringAttr>(valuesIndex, "onnx.name")) {
      name = n.getValue().str();
      llvm::StringRef ref(name);
      if (ref.consume_back(".values") && !ref.empty())
        name = ref.str();
    }
    Type kjtType = create.getResult().getType();
    if (failed(func.insertArgument(valuesIndex, kjtType,
                                   b.getDictionaryAttr(b.getNamedAttr(
                                       "onnx.name", b.getStringAttr(name))),
                                   create.getLoc())))
      return failure();
    BlockArgument kjt = entry.getArgument(valuesIndex);
    create.getResult().replaceAllUsesWith(kjt);
    // Other readers of the parts read them through accessors of the KJT.
    b.setInsertionPointToStart(&entry);
    for (auto [i, v] : llvm::enumerate(parts)) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : v.getUses())
        if (use.getOwner() != create.getOperation())
          uses.push_back(&use);
      if (uses.empty())
        continue;
      Value part;
      if (i == 0)
        part = KJTValuesOp::create(b, create.getLoc(), kjt);
      else if (i == 1)
        part = KJTLengthsOp::create(b, create.getLoc(), kjt);
      else
        part = KJTWeightsOp::create(b, create.getLoc(), kjt);
      if (part.getType() != v.getType())
        part = tensor::CastOp::create(b, create.getLoc(), v.getType(), part);
      for (OpOperand *use : uses)
        use->set(part);
    }
    create.erase();
  }
  llvm::BitVector erase(func.getNumArguments());
  for (Value v : claimed)
    erase.set(cast<BlockArgument>(v).getArgNumber());
  if (erase.any() && failed(func.eraseArguments(erase)))
    return failure();
  return success();
}

} // namespace onnx_importer
} // namespace ember
} // namespace mlir
