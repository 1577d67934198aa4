//===- reduction_attrs.cpp - reduce and comm_dtype of a reduction ---------===//
#include "comm/kernels/reduction_attrs.h"

#include "comm/kernels/collective_common.h"

namespace ember::collective {

Result<ReductionAttrs> readReductionAttrs(const Attributes &attrs,
                                          const std::string &where) {
  auto isMax = reduceIsMax(attrs);
  if (!isMax)
    return isMax.status().withContext(where);
  auto codecOr = commCodec(attrs);
  if (!codecOr)
    return codecOr.status().withContext(where);
  ReductionAttrs r;
  r.isMax = *isMax;
  r.codec = *codecOr;
  return r;
}

} // namespace ember::collective
