//===- PlanProgramBuilder.cpp - Slots, constants and instructions ---------===//
#include "plan/PlanProgramBuilder.h"

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
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return false;
  Type elementType = dense.getElementType();
  if (elementType.isInteger(1) || !toPlanDType(elementType))
    return false;
  pendingAttrs_[value] = attr;
  return true;
}

ElementsAttr PlanProgramBuilder::constantAttr(Value value) const {
  auto it = pendingAttrs_.find(value);
  return it == pendingAttrs_.end() ? ElementsAttr() : it->second;
}

int PlanProgramBuilder::lookupOrMaterialize(Value value,
                                            const std::string &name) {
  int slot = lookupSlot(value);
  if (slot >= 0)
    return slot;
  auto it = pendingAttrs_.find(value);
  if (it == pendingAttrs_.end())
    return -1;
  auto dense = cast<DenseElementsAttr>(it->second);
  slot = materializeConstant(dense, name);
  if (slot < 0)
    return -1;
  slotOf_[value] = slot;
  dimsOf_[value] = DimList();
  // The constant's own shape (the value may be a table, whose rows it is).
  for (int64_t d : cast<RankedTensorType>(dense.getType()).getShape())
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
  int slot = program_->slots_size();
  pb::Slot *s = program_->add_slots();
  s->set_name(name);
  s->set_dtype(*dtype);
  for (int64_t d : type.getShape())
    s->add_shape()->set_size(d);
  size_t elementBytes = type.getElementTypeBitWidth() / 8;
  size_t numElements = static_cast<size_t>(type.getNumElements());
  PendingConstant constant;
  constant.slot = slot;
  constant.bytes.resize(elementBytes * numElements);
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (size_t i = 0; i < numElements; ++i)
      std::memcpy(constant.bytes.data() + i * elementBytes, raw.data(),
                  elementBytes);
  } else {
    if (raw.size() != constant.bytes.size())
      return -1;
    std::memcpy(constant.bytes.data(), raw.data(), raw.size());
  }
  constants_.push_back(std::move(constant));
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
