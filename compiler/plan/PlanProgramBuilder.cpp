//===- PlanProgramBuilder.cpp - Slots, constants and instructions ---------===//
#include "plan/PlanProgramBuilder.h"

#include "passes/WeightData.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstring>

namespace mlir::ember::plan_emitter {

std::optional<pb::DataType> PlanProgramBuilder::toPlanDType(Type t) {
  if (t.isF32())
    return pb::FLOAT32;
  if (t.isF16())
    return pb::FLOAT16;
  if (t.isBF16())
    return pb::BFLOAT16;
  if (t.isF64())
    return pb::FLOAT64;
  if (t.isInteger(1))
    return pb::BOOL;
  if (auto it = dyn_cast<IntegerType>(t)) {
    switch (it.getWidth()) {
    case 8:
      return it.isUnsigned() ? pb::UINT8 : pb::INT8;
    case 32:
      return it.isUnsigned() ? std::nullopt
                             : std::optional<pb::DataType>(pb::INT32);
    case 64:
      return it.isUnsigned() ? std::nullopt
                             : std::optional<pb::DataType>(pb::INT64);
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string PlanProgramBuilder::freshSymbol() {
  for (;;) {
    std::string name = "d" + std::to_string(nextSymbol_++);
    if (usedSymbols_.insert(name).second)
      return name;
  }
}

int PlanProgramBuilder::defineSlot(Value value, const DimList &dims,
                                   const std::string &name) {
  int index = defineExtraSlot(value, dims, name);
  if (index < 0)
    return -1;
  slotOf_[value] = index;
  dimsOf_[value] = dims;
  return index;
}

int PlanProgramBuilder::defineExtraSlot(Value like, const DimList &dims,
                                        const std::string &name) {
  auto type = dyn_cast<RankedTensorType>(like.getType());
  if (!type || static_cast<int64_t>(dims.size()) != type.getRank())
    return -1;
  return defineTypedSlot(type.getElementType(), dims, name);
}

int PlanProgramBuilder::defineTypedSlot(Type elementType, const DimList &dims,
                                        const std::string &name) {
  std::optional<pb::DataType> dtype = toPlanDType(elementType);
  if (!dtype)
    return -1;
  int index = program_->slots_size();
  pb::Slot *slot = program_->add_slots();
  slot->set_name(name);
  slot->set_dtype(*dtype);
  for (const DimInfo &d : dims) {
    pb::Dim *pd = slot->add_shape();
    if (d.isSymbolic()) {
      pd->set_symbol(d.symbol);
      usedSymbols_.insert(d.symbol);
    } else {
      pd->set_size(d.size);
    }
  }
  return index;
}

int PlanProgramBuilder::lookupSlot(Value value) const {
  auto it = slotOf_.find(value);
  return it == slotOf_.end() ? -1 : it->second;
}

const DimList *PlanProgramBuilder::lookupDims(Value value) const {
  auto it = dimsOf_.find(value);
  return it == dimsOf_.end() ? nullptr : &it->second;
}

bool PlanProgramBuilder::addPendingConstant(Value value, ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !weightBytesOf(attr))
    return false;
  Type elementType = type.getElementType();
  if (elementType.isInteger(1) || !toPlanDType(elementType))
    return false;
  PendingValue pending;
  pending.attr = attr;
  pending.elementType = elementType;
  pending.shape.assign(type.getShape().begin(), type.getShape().end());
  pending_[value] = pending;
  return true;
}

bool PlanProgramBuilder::addPendingWindow(Value value, Value source,
                                          int64_t row0, int64_t rows,
                                          int64_t col0, int64_t cols) {
  auto it = pending_.find(source);
  if (it == pending_.end() || it->second.shape.size() != 2)
    return false;
  PendingValue window = it->second;
  if (row0 < 0 || col0 < 0 || rows < 0 || cols < 0 ||
      row0 > window.shape[0] - rows || col0 > window.shape[1] - cols)
    return false;
  window.row0 += row0;
  window.col0 += col0;
  window.shape = {rows, cols};
  window.window = true;
  pending_[value] = window;
  return true;
}

bool PlanProgramBuilder::retypePendingConstant(Value value, Type elementType) {
  auto it = pending_.find(value);
  if (it == pending_.end() || lookupSlot(value) >= 0 ||
      !toPlanDType(elementType) ||
      elementType.getIntOrFloatBitWidth() !=
          it->second.elementType.getIntOrFloatBitWidth())
    return false;
  it->second.elementType = elementType;
  return true;
}

ElementsAttr PlanProgramBuilder::constantAttr(Value value) const {
  auto it = pending_.find(value);
  if (it == pending_.end() || it->second.window ||
      it->second.elementType !=
          cast<ShapedType>(it->second.attr.getType()).getElementType())
    return ElementsAttr();
  return it->second.attr;
}

std::optional<PendingConstant>
PlanProgramBuilder::viewOf(const PendingValue &pending, int slot) {
  std::optional<WeightBytes> bytes = weightBytesOf(pending.attr);
  if (!bytes)
    return std::nullopt;
  uint64_t count = 1;
  for (int64_t d : pending.shape)
    count *= static_cast<uint64_t>(d);
  PendingConstant constant;
  constant.slot = slot;
  constant.source = bytes->data.data();
  if (bytes->splat) {
    // One element, repeated.
    constant.rows = count;
    constant.rowBytes = bytes->elementBytes;
    constant.rowStride = 0;
    return constant;
  }
  if (!pending.window) {
    constant.rows = count ? 1 : 0;
    constant.rowBytes = count * bytes->elementBytes;
    constant.rowStride = constant.rowBytes;
    return constant;
  }
  uint64_t width = static_cast<uint64_t>(
      cast<ShapedType>(pending.attr.getType()).getDimSize(1));
  constant.source += (static_cast<uint64_t>(pending.row0) * width +
                      static_cast<uint64_t>(pending.col0)) *
                     bytes->elementBytes;
  constant.rows = static_cast<uint64_t>(pending.shape[0]);
  constant.rowBytes =
      static_cast<uint64_t>(pending.shape[1]) * bytes->elementBytes;
  constant.rowStride = width * bytes->elementBytes;
  return constant;
}

int PlanProgramBuilder::lookupOrMaterialize(Value value,
                                            const std::string &name) {
  int slot = lookupSlot(value);
  if (slot >= 0)
    return slot;
  auto it = pending_.find(value);
  if (it == pending_.end())
    return -1;
  const PendingValue &pending = it->second;
  std::optional<pb::DataType> dtype = toPlanDType(pending.elementType);
  if (!dtype || pending.elementType.isInteger(1) ||
      llvm::any_of(pending.shape, ShapedType::isDynamic))
    return -1;
  slot = addConstantSlot(pending, *dtype, name);
  if (slot < 0)
    return -1;
  slotOf_[value] = slot;
  dimsOf_[value] = DimList();
  // The constant's own shape (the value may be a table, whose rows it is).
  for (int64_t d : pending.shape)
    dimsOf_[value].push_back(DimInfo{d, {}});
  return slot;
}

int PlanProgramBuilder::materializeConstant(DenseElementsAttr dense,
                                            const std::string &name) {
  auto type = dyn_cast<RankedTensorType>(dense.getType());
  if (!type || !type.hasStaticShape() || type.getElementType().isInteger(1))
    return -1;
  std::optional<pb::DataType> dtype = toPlanDType(type.getElementType());
  if (!dtype)
    return -1;
  PendingValue pending;
  pending.attr = dense;
  pending.elementType = type.getElementType();
  pending.shape.assign(type.getShape().begin(), type.getShape().end());
  return addConstantSlot(pending, *dtype, name);
}

int PlanProgramBuilder::addConstantSlot(const PendingValue &pending,
                                        pb::DataType dtype,
                                        const std::string &name) {
  int slot = program_->slots_size();
  std::optional<PendingConstant> constant = viewOf(pending, slot);
  if (!constant)
    return -1;
  pb::Slot *s = program_->add_slots();
  s->set_name(name);
  s->set_dtype(dtype);
  for (int64_t d : pending.shape)
    s->add_shape()->set_size(d);
  constants_.push_back(*constant);
  return slot;
}

pb::Instruction *
PlanProgramBuilder::addInstruction(const std::string &kernel,
                                   const std::string &location) {
  pb::Instruction *instr = program_->add_instructions();
  instr->set_kernel(kernel);
  instr->set_name(location);
  return instr;
}

void addIntAttr(pb::Instruction *instr, const std::string &name, int64_t v) {
  pb::Attribute *a = instr->add_attrs();
  a->set_name(name);
  a->set_i(v);
}

void addStringAttr(pb::Instruction *instr, const std::string &name,
                   const std::string &v) {
  pb::Attribute *a = instr->add_attrs();
  a->set_name(name);
  a->set_s(v);
}

void addIntsAttr(pb::Instruction *instr, const std::string &name,
                 llvm::ArrayRef<int64_t> values) {
  pb::Attribute *a = instr->add_attrs();
  a->set_name(name);
  for (int64_t v : values)
    a->mutable_ints()->add_values(v);
}

} // namespace mlir::ember::plan_emitter
