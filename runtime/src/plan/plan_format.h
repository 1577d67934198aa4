//===- plan_format.h - Constants of the plan format -------------*- C++ -*-===//
//
// Shared by the plan writer (compiler, test helpers) and the loader. Depends
// on nothing but the generated protobuf code.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_PLAN_FORMAT_H
#define EMBER_PLAN_PLAN_FORMAT_H

#include <cstdint>

namespace ember {

/// The newest plan format this build reads and writes. Version 2 added
/// Plan.target, Plan.symbol_bounds, RankProgram.arena_bytes and
/// Slot.arena_offset (a version 1 plan reads as: CPU, no bounds, no static
/// arena). docs/plan-format.md lists the changes.
constexpr uint32_t kPlanFormatVersion = 2;
/// Plan.end_marker of every complete binary plan: "EMBEREND" little-endian.
constexpr uint64_t kPlanEndMarker = 0x444E45524542454DULL;
/// Constants start at multiples of this many bytes in a weights file.
constexpr uint64_t kWeightAlignment = 64;
/// A plan protobuf larger than this is refused (protobuf's own limit is 2 GiB;
/// weights never live in the plan, so real plans are a few MiB).
constexpr uint64_t kMaxPlanBytes = 1ULL << 30;

} // namespace ember

#endif // EMBER_PLAN_PLAN_FORMAT_H
