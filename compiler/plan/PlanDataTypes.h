//===- PlanDataTypes.h - Sizes of the plan's element types ------*- C++ -*-===//
#ifndef EMBER_COMPILER_PLAN_PLANDATATYPES_H
#define EMBER_COMPILER_PLAN_PLANDATATYPES_H

#include "plan/ember_plan.pb.h"

#include <cstdint>

namespace mlir::ember::plan_emitter {

/// Bytes per element of a plan DataType (0 for DATA_TYPE_UNSPECIFIED).
inline int64_t planDtypeBytes(int dtype) {
  namespace pb = ::ember::plan;
  switch (dtype) {
  case pb::FLOAT32:
  case pb::INT32:
    return 4;
  case pb::FLOAT16:
  case pb::BFLOAT16:
    return 2;
  case pb::INT8:
  case pb::UINT8:
  case pb::BOOL:
    return 1;
  case pb::INT64:
  case pb::FLOAT64:
    return 8;
  default:
    return 0;
  }
}

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANDATATYPES_H
