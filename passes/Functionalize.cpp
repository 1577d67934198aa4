//===- Functionalize.cpp - ember.mut to value semantics -------------------===//
//
// Replaces every buffer made by ember.mut.from_tensor by the sequence of
// tensor values it holds: writes (mut.copy, directly or through mut.slice
// views) become tensor.insert_slice chains producing the buffer's next value,
// reads (mut.to_tensor) become the current value or tensor.extract_slice
// chains of it. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "passes/Passes.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace ember {
#define GEN_PASS_DEF_EMBERFUNCTIONALIZE
#include "passes/Passes.h.inc"
} // namespace ember
} // namespace mlir

using namespace mlir;
using namespace mlir::ember;

namespace {

/// True when `type` is or contains (e.g. in a function type) a mutable tensor.
bool containsMutable(Type type) {
  bool found = false;
  type.walk([&](MutableTensorType) { found = true; });
  return found;
}

bool isMutationOp(Operation *op) {
  return isa<MutFromTensorOp, MutSliceOp, MutToTensorOp, MutCopyOp>(op);
}

/// The type of the tensor value that stands for mutable value `mut` after
/// functionalization: the buffer's own tensor type, or for a view the type
/// tensor.extract_slice infers from the slice's static sizes.
RankedTensorType valueTypeOf(Value mut) {
  if (auto slice = mut.getDefiningOp<MutSliceOp>())
    return RankedTensorType::get(
        slice.getStaticSizes(),
        slice.getType().getTensorType().getElementType());
  return cast<MutableTensorType>(mut.getType()).getTensorType();
}

/// Emits `error` at `user` with a note at the definition of `mut`.
void emitUseError(Operation *user, Value mut, const Twine &error) {
  InFlightDiagnostic diag = user->emitError(error);
  if (Operation *def = mut.getDefiningOp())
    diag.attachNote(def->getLoc()) << "mutable tensor defined here";
}

/// Checks that every mutable value in `root` is one this pass can rewrite
/// (see Passes.td) and that every read and write fits its buffer or view.
/// Emits one error per problem; changes nothing.
LogicalResult checkFunctionalizable(Operation *root) {
  bool ok = true;
  root->walk([&](Operation *op) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    bool badSignature = function && containsMutable(function.getFunctionType());
    if (badSignature) {
      op->emitError("cannot functionalize a function whose signature has a "
                    "mutable tensor (")
          << function.getFunctionType()
          << "): a caller would see its writes; pass tensors and make "
             "buffers with ember.mut.from_tensor inside";
      ok = false;
    }
    for (Region &region : op->getRegions()) {
      for (Block &block : region) {
        if (badSignature && block.isEntryBlock())
          continue;
        for (BlockArgument arg : block.getArguments()) {
          if (!containsMutable(arg.getType()))
            continue;
          op->emitError("cannot functionalize mutable block argument #")
              << arg.getArgNumber() << " of type " << arg.getType()
              << ": a buffer must be made by ember.mut.from_tensor in the "
                 "block that uses it";
          ok = false;
        }
      }
    }
    for (Value result : op->getResults()) {
      if (!containsMutable(result.getType()))
        continue;
      if (!isa<MutableTensorType>(result.getType()) ||
          !isa<MutFromTensorOp, MutSliceOp>(op)) {
        op->emitError("'")
            << op->getName() << "' produces a mutable tensor ("
            << result.getType()
            << "); only ember.mut.from_tensor and ember.mut.slice may";
        ok = false;
        continue;
      }
      for (OpOperand &use : result.getUses()) {
        Operation *user = use.getOwner();
        bool handled = (isa<MutSliceOp>(user) && use.getOperandNumber() == 0) ||
                       isa<MutToTensorOp>(user) ||
                       (isa<MutCopyOp>(user) && use.getOperandNumber() == 1);
        if (!handled) {
          emitUseError(user, result,
                       "mutable tensor escapes into '" +
                           user->getName().getStringRef() +
                           "': only ember.mut.slice, ember.mut.copy and "
                           "ember.mut.to_tensor can use it");
          ok = false;
        } else if (user->getBlock() != op->getBlock()) {
          emitUseError(user, result,
                       "mutable tensor used in another block or a nested "
                       "region: only straight-line code in the block that "
                       "makes the buffer is supported");
          ok = false;
        }
      }
    }
  });
  if (!ok)
    return failure();

  // Reads and writes must fit the static shape of the value standing for the
  // buffer or view, and views must lie inside it, or the tensor ops made
  // below would not verify.
  root->walk([&](Operation *op) {
    if (auto slice = dyn_cast<MutSliceOp>(op)) {
      RankedTensorType parent = valueTypeOf(slice.getSource());
      for (int64_t i = 0, e = parent.getRank(); i < e; ++i) {
        int64_t offset = slice.getStaticOffsets()[i];
        int64_t size = slice.getStaticSizes()[i];
        int64_t stride = slice.getStaticStrides()[i];
        int64_t extent = parent.getDimSize(i);
        if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(size) ||
            ShapedType::isDynamic(stride) || ShapedType::isDynamic(extent))
          continue;
        if (offset > extent ||
            (size > 0 && offset + (size - 1) * stride >= extent)) {
          slice.emitError("slice of dim ")
              << i << " (offset " << offset << ", size " << size << ", stride "
              << stride << ") runs past the size " << extent
              << " of the sliced view";
          ok = false;
        }
      }
      return;
    }
    Type valueType;
    Value mut;
    if (auto read = dyn_cast<MutToTensorOp>(op)) {
      valueType = read.getType();
      mut = read.getSource();
    } else if (auto write = dyn_cast<MutCopyOp>(op)) {
      valueType = write.getValue().getType();
      mut = write.getTarget();
    } else {
      return;
    }
    RankedTensorType expected = valueTypeOf(mut);
    if (!tensor::CastOp::areCastCompatible(valueType, expected)) {
      op->emitError("value of type ")
          << valueType << " does not fit the " << expected
          << " region it reads or writes";
      ok = false;
    }
  });
  return success(ok);
}

/// The slices from the buffer to view `mut`, buffer first; sets `buffer`.
SmallVector<MutSliceOp> viewChain(Value mut, Value &buffer) {
  SmallVector<MutSliceOp> chain;
  while (auto slice = mut.getDefiningOp<MutSliceOp>()) {
    chain.push_back(slice);
    mut = slice.getSource();
  }
  buffer = mut;
  std::reverse(chain.begin(), chain.end());
  return chain;
}

/// Rewrites the mutation ops of one block, in program order.
class BlockFunctionalizer {
public:
  explicit BlockFunctionalizer(Block &block) : block(block) {}

  void run() {
    SmallVector<Operation *> mutationOps;
    for (Operation &op : block) {
      if (!isMutationOp(&op))
        continue;
      mutationOps.push_back(&op);
      OpBuilder builder(&op);
      if (auto make = dyn_cast<MutFromTensorOp>(op))
        current[make.getResult()] =
            castTo(builder, make.getLoc(), make.getValue(),
                   make.getType().getTensorType());
      else if (auto read = dyn_cast<MutToTensorOp>(op))
        rewriteRead(builder, read);
      else if (auto write = dyn_cast<MutCopyOp>(op))
        rewriteWrite(builder, write);
    }
    // Users first: reads and writes, then views, then buffers.
    for (Operation *op : llvm::reverse(mutationOps))
      op->erase();
    // Writes that are never read leave dead tensor ops behind.
    for (Operation *op : llvm::reverse(created))
      if (op->use_empty())
        op->erase();
  }

private:
  Value castTo(OpBuilder &builder, Location loc, Value value, Type type) {
    if (value.getType() == type)
      return value;
    return track(tensor::CastOp::create(builder, loc, type, value));
  }

  Value extract(OpBuilder &builder, Location loc, Value from,
                MutSliceOp slice) {
    return track(tensor::ExtractSliceOp::create(
        builder, loc, valueTypeOf(slice.getResult()), from,
        mixedOffsets(builder, slice), mixedSizes(builder, slice),
        mixedStrides(builder, slice)));
  }

  Value insert(OpBuilder &builder, Location loc, Value value, Value into,
               MutSliceOp slice) {
    return track(tensor::InsertSliceOp::create(
        builder, loc, value, into, mixedOffsets(builder, slice),
        mixedSizes(builder, slice), mixedStrides(builder, slice)));
  }

  static SmallVector<OpFoldResult> mixedOffsets(OpBuilder &b, MutSliceOp s) {
    return getMixedValues(s.getStaticOffsets(), s.getOffsets(), b);
  }
  static SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, MutSliceOp s) {
    return getMixedValues(s.getStaticSizes(), s.getSizes(), b);
  }
  static SmallVector<OpFoldResult> mixedStrides(OpBuilder &b, MutSliceOp s) {
    return getMixedValues(s.getStaticStrides(), s.getStrides(), b);
  }

  Value track(Operation *op) {
    created.insert(op);
    return op->getResult(0);
  }

  /// `mut.to_tensor`: the buffer's current value, sliced down to the view.
  void rewriteRead(OpBuilder &builder, MutToTensorOp read) {
    Value buffer;
    SmallVector<MutSliceOp> chain = viewChain(read.getSource(), buffer);
    Value value = current.lookup(buffer);
    for (MutSliceOp slice : chain)
      value = extract(builder, read.getLoc(), value, slice);
    read.getResult().replaceAllUsesWith(
        castTo(builder, read.getLoc(), value, read.getType()));
  }

  /// `mut.copy`: the buffer's next value. For a view s_1(..s_k(buffer)),
  /// extracts s_1 .. s_{k-1} of the current value, then inserts the written
  /// value back through s_k .. s_1.
  void rewriteWrite(OpBuilder &builder, MutCopyOp write) {
    Location loc = write.getLoc();
    Value buffer;
    SmallVector<MutSliceOp> chain = viewChain(write.getTarget(), buffer);
    Value value =
        castTo(builder, loc, write.getValue(), valueTypeOf(write.getTarget()));
    if (chain.empty()) {
      current[buffer] = value;
      return;
    }
    SmallVector<Value> enclosing{current.lookup(buffer)};
    for (MutSliceOp slice : ArrayRef(chain).drop_back())
      enclosing.push_back(extract(builder, loc, enclosing.back(), slice));
    for (auto [slice, into] : llvm::reverse(llvm::zip_equal(chain, enclosing)))
      value = insert(builder, loc, value, into, slice);
    current[buffer] = value;
  }

  Block &block;
  /// Current value of each buffer (mut.from_tensor result) of the block.
  DenseMap<Value, Value> current;
  /// Tensor ops made by this rewrite, in creation order.
  llvm::SetVector<Operation *> created;
};

/// Reports any mutation op or mutable type left in `root`.
LogicalResult checkNoMutationLeft(Operation *root) {
  WalkResult result = root->walk([&](Operation *op) {
    bool left = isMutationOp(op) ||
                llvm::any_of(op->getResultTypes(), containsMutable) ||
                llvm::any_of(op->getOperandTypes(), containsMutable);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        left |= llvm::any_of(block.getArgumentTypes(), containsMutable);
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      left |= containsMutable(function.getFunctionType());
    if (!left)
      return WalkResult::advance();
    op->emitError("ember-functionalize left a mutable tensor behind");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct FunctionalizePass
    : public mlir::ember::impl::EmberFunctionalizeBase<FunctionalizePass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkFunctionalizable(root)))
      return signalPassFailure();
    SmallVector<Block *> blocks;
    root->walk([&](Block *block) {
      if (llvm::any_of(*block, [](Operation &op) { return isMutationOp(&op); }))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      BlockFunctionalizer(*block).run();
    if (failed(checkNoMutationLeft(root)))
      return signalPassFailure();
  }
};

} // namespace
