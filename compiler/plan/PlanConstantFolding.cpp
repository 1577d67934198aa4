//===- PlanConstantFolding.cpp - Folding ops on weights -------------------===//
#include "plan/PlanConstantFolding.h"

#include <cstring>
#include <vector>

namespace mlir::ember::plan_emitter {

namespace {
thread_local FoldedConstantCache *activeCache = nullptr;

DenseElementsAttr transposeUncached(DenseElementsAttr attr,
                                    ArrayRef<int32_t> perm) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape() ||
      static_cast<int64_t>(perm.size()) != type.getRank())
    return {};
  int64_t rank = type.getRank();
  std::vector<bool> seen(rank, false);
  SmallVector<int64_t> outShape;
  for (int32_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return {};
    seen[p] = true;
    outShape.push_back(type.getDimSize(p));
  }
  auto outType = RankedTensorType::get(outShape, type.getElementType());
  if (attr.isSplat())
    return attr.resizeSplat(outType);
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return {};
  size_t elementBytes = bits / 8;
  ArrayRef<char> in = attr.getRawData();
  int64_t count = type.getNumElements();
  if (in.size() != static_cast<size_t>(count) * elementBytes)
    return {};
  // Input strides, then walk the output in order.
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * type.getDimSize(d + 1);
  std::vector<char> out(in.size());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t k = 0; k < rank; ++k)
      src += index[k] * inStrides[perm[k]];
    std::memcpy(out.data() + i * elementBytes, in.data() + src * elementBytes,
                elementBytes);
    for (int64_t k = rank - 1; k >= 0; --k) {
      if (++index[k] < outShape[k])
        break;
      index[k] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(outType, out);
}
} // namespace

FoldedConstantCache::FoldedConstantCache() : outer_(activeCache) {
  activeCache = this;
}

FoldedConstantCache::~FoldedConstantCache() { activeCache = outer_; }

FoldedConstantCache *FoldedConstantCache::active() { return activeCache; }

DenseElementsAttr FoldedConstantCache::lookup(DenseElementsAttr attr,
                                              ArrayRef<int32_t> perm) const {
  auto it = folded_.find({attr.getAsOpaquePointer(),
                          std::vector<int32_t>(perm.begin(), perm.end())});
  return it == folded_.end() ? DenseElementsAttr() : it->second;
}

void FoldedConstantCache::insert(DenseElementsAttr attr,
                                 ArrayRef<int32_t> perm,
                                 DenseElementsAttr folded) {
  folded_[{attr.getAsOpaquePointer(),
           std::vector<int32_t>(perm.begin(), perm.end())}] = folded;
}

DenseElementsAttr transposeConstant(DenseElementsAttr attr,
                                    ArrayRef<int32_t> perm) {
  FoldedConstantCache *cache = FoldedConstantCache::active();
  if (cache)
    if (DenseElementsAttr folded = cache->lookup(attr, perm))
      return folded;
  DenseElementsAttr folded = transposeUncached(attr, perm);
  if (cache && folded)
    cache->insert(attr, perm, folded);
  return folded;
}

DenseElementsAttr reshapeConstant(DenseElementsAttr attr,
                                  RankedTensorType type) {
  auto inType = dyn_cast<RankedTensorType>(attr.getType());
  if (!inType || !inType.hasStaticShape() || !type.hasStaticShape() ||
      inType.getElementType() != type.getElementType() ||
      inType.getNumElements() != type.getNumElements())
    return {};
  return attr.reshape(type);
}

} // namespace mlir::ember::plan_emitter
