//===- PlanProgramBuilder.h - Slots, constants and instructions -*- C++ -*-===//
//
// The bookkeeping of the plan emitter: which MLIR value lives in which slot
// of the rank program, the symbolic dims of each value, constant data waiting
// for the weights file, and the instruction list. It knows nothing about
// individual ops (PlanEmitter.cpp maps ops to kernels).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANPROGRAMBUILDER_H
#define EMBER_COMPILER_PLAN_PLANPROGRAMBUILDER_H

#include "plan/ember_plan.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ember::plan_emitter {

/// The plan schema's generated messages (package ember.plan).
namespace pb = ::ember::plan;

/// One dim of a value: a static size, or a symbol (bound at run time).
struct DimInfo {
  int64_t size = 0;
  std::string symbol; // empty for a static dim
  bool isSymbolic() const { return !symbol.empty(); }
};
using DimList = std::vector<DimInfo>;

/// A constant waiting for the weights file. Its bytes are not copied: they
/// are `rows` pieces of `rowBytes` bytes, piece r at `source + r * rowStride`
/// (a whole constant is one piece, a column window of a table one piece per
/// row, a splat its one element repeated with stride 0). `source` points into
/// an attribute of the module (its bytes, or a file mapping it owns), which
/// outlives the writing (PlanWeightsWriter.h streams them).
struct PendingConstant {
  int slot = -1;
  const char *source = nullptr;
  uint64_t rows = 0;
  uint64_t rowBytes = 0;
  uint64_t rowStride = 0;
  uint64_t size() const { return rows * rowBytes; }
};

class PlanProgramBuilder {
public:
  explicit PlanProgramBuilder(pb::RankProgram *program) : program_(program) {}

  /// The plan dtype of an element type, or nullopt when plans cannot hold it.
  static std::optional<pb::DataType> toPlanDType(Type elementType);

  /// A symbol that no dim uses yet ("d0", "d1", ...). Symbols may be shared
  /// on purpose (ONNX dim params, dims that ops carry through); reserve
  /// those first so that fresh ones never collide with them.
  std::string freshSymbol();
  void reserveSymbol(const std::string &name) { usedSymbols_.insert(name); }

  /// Creates the slot of `value` with the given dims; fails (returns -1) when
  /// the type is not a ranked tensor of a plan dtype.
  int defineSlot(Value value, const DimList &dims, const std::string &name);
  /// A slot with the type of `value` and `dims` that is not the slot of any
  /// value (e.g. a copy of an input returned as an output).
  int defineExtraSlot(Value like, const DimList &dims, const std::string &name);
  /// A slot of `elementType` and `dims` that is not the slot of any value
  /// (intermediates of ops that become several instructions); -1 when plans
  /// cannot hold the element type.
  int defineTypedSlot(Type elementType, const DimList &dims,
                      const std::string &name);

  /// Makes `value` another name of an existing slot (with its dims), e.g.
  /// the result of ember.wait for the slot its collective wrote.
  void bindSlot(Value value, int slot, const DimList &dims) {
    slotOf_[value] = slot;
    dimsOf_[value] = dims;
  }
  /// The slot holding `value`, or -1.
  int lookupSlot(Value value) const;
  /// The dims recorded for `value` (its slot's), or nullptr.
  const DimList *lookupDims(Value value) const;

  /// Records `value` as a constant with the bytes of `attr` (materialized as
  /// a slot on first use by lookupOrMaterialize). Returns false when the
  /// attribute's data cannot be written (bool or non-numeric data; dense or
  /// over a mapped file, passes/WeightData.h).
  bool addPendingConstant(Value value, ElementsAttr attr);
  /// Records `value` as rows [row0, row0 + rows) x columns [col0, col0 +
  /// cols) of the 2-D recorded constant `source` (its bytes are written from
  /// the source's, row by row). False when `source` is not a 2-D recorded
  /// constant or the window lies outside it.
  bool addPendingWindow(Value value, Value source, int64_t row0, int64_t rows,
                        int64_t col0, int64_t cols);
  /// Gives the recorded constant `value` another element type of the same
  /// width (a table's bytes as uint8); false when it is not one.
  bool retypePendingConstant(Value value, Type elementType);
  bool isPendingConstant(Value value) const {
    return pending_.count(value) != 0;
  }
  /// The constant attribute of `value`, if it is a recorded constant that is
  /// the whole attribute (not a window, not retyped).
  ElementsAttr constantAttr(Value value) const;
  /// The slot of `value`, creating constant slots on first use; -1 when the
  /// value is neither.
  int lookupOrMaterialize(Value value, const std::string &name);
  /// A new constant slot holding `attr` (static shape, dense numeric data),
  /// not tied to any value; -1 when the data cannot be written.
  int materializeConstant(DenseElementsAttr attr, const std::string &name);

  pb::Instruction *addInstruction(const std::string &kernel,
                                  const std::string &location);

  std::vector<PendingConstant> &constants() { return constants_; }
  pb::RankProgram *program() { return program_; }

private:
  pb::RankProgram *program_;
  llvm::DenseMap<Value, int> slotOf_;
  llvm::DenseMap<Value, DimList> dimsOf_;
  /// A recorded constant: `attr`'s bytes (or a 2-D window of them) as a
  /// slot of `elementType` and `shape`.
  struct PendingValue {
    ElementsAttr attr;
    Type elementType;
    llvm::SmallVector<int64_t, 2> shape;
    bool window = false;
    int64_t row0 = 0, col0 = 0;
  };
  /// The bytes of `pending` as a PendingConstant of `slot`.
  static std::optional<PendingConstant> viewOf(const PendingValue &pending,
                                               int slot);
  /// A new slot (`name`, `dtype`, the pending value's static shape) holding
  /// the bytes of `pending`; -1 when they cannot be viewed.
  int addConstantSlot(const PendingValue &pending, pb::DataType dtype,
                      const std::string &name);
  llvm::DenseMap<Value, PendingValue> pending_;
  std::vector<PendingConstant> constants_;
  llvm::StringSet<> usedSymbols_;
  int nextSymbol_ = 0;
};

/// Attribute helpers for instructions.
void addIntAttr(pb::Instruction *instr, const std::string &name, int64_t v);
void addStringAttr(pb::Instruction *instr, const std::string &name,
                   const std::string &v);
void addIntsAttr(pb::Instruction *instr, const std::string &name,
                 llvm::ArrayRef<int64_t> values);

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANPROGRAMBUILDER_H
