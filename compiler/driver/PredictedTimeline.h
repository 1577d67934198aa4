//===- PredictedTimeline.h - ember-compile --emit timeline -----*- C++ -*-===//
//
// The compiler's predicted timeline of the plan it would emit: the plan is
// emitted in memory (no weights read or written), its topology read as the
// sharding planner reads it (sharding/ShardingDriver.h), every rank's
// program simulated (compiler/timeline/) and the trace written whole or not
// at all. docs/timeline.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_DRIVER_PREDICTEDTIMELINE_H
#define EMBER_COMPILER_DRIVER_PREDICTEDTIMELINE_H

#include "driver/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::ember::driver {

struct TimelineRequest {
  /// Ids per bag of every id input (bags, KJT values); > 0.
  double idsPerBag = 1.0;
  /// The model file, for the trace's provenance.
  std::string modelFile;
};

/// Writes the predicted timeline of `module` (after runCompilePipeline with
/// `options`) to `outputPath` ('-': standard output). Errors are
/// diagnostics; nothing is written on error.
LogicalResult writePredictedTimeline(ModuleOp module,
                                     const CompileOptions &options,
                                     const TimelineRequest &request,
                                     llvm::StringRef outputPath);

} // namespace mlir::ember::driver

#endif // EMBER_COMPILER_DRIVER_PREDICTEDTIMELINE_H
