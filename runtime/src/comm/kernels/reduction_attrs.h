//===- reduction_attrs.h - reduce and comm_dtype of a reduction -*- C++ -*-===//
//
// The two attributes every reducing collective (reduce_scatter, all_reduce)
// reads: 'reduce' ("sum" | "max") and 'comm_dtype' (comm_codec.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_KERNELS_REDUCTION_ATTRS_H
#define EMBER_COMM_KERNELS_REDUCTION_ATTRS_H

#include "comm/kernels/comm_codec.h"
#include "kernels/attributes.h"

#include <string>

namespace ember::collective {

struct ReductionAttrs {
  bool isMax = false; // reduce = "max" (else "sum")
  CommCodec codec = CommCodec::kNone;
};

/// Reads 'reduce' then 'comm_dtype'; errors name `where`.
Result<ReductionAttrs> readReductionAttrs(const Attributes &attrs,
                                          const std::string &where);

} // namespace ember::collective

#endif // EMBER_COMM_KERNELS_REDUCTION_ATTRS_H
