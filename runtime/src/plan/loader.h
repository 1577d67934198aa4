//===- loader.h - Loading and validating plans ------------------*- C++ -*-===//
//
// Turns a plan file (+ its weights files) into a validated Program. Every
// field is checked; a corrupt, truncated or mismatched plan or weights file
// is a Status (kDataLoss, kInvalidArgument, kNotFound, kFailedPrecondition)
// whose message names the file and the offending field, never a crash.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_LOADER_H
#define EMBER_PLAN_LOADER_H

#include "ember/status.h"
#include "plan/program.h"

#include "plan/weight_memory.h"

#include <memory>
#include <string>

namespace ember {

class KernelRegistry;

struct LoadOptions {
  int rank = 0;
  /// The ranks the caller runs: a plan for another number of ranks is
  /// refused (a single-rank session cannot run a multi-rank plan).
  int worldSize = 1;
  bool verifyChecksums = true;
  /// The backend that will run the program ("cpu" or "cuda"); a plan
  /// compiled for another target is refused.
  std::string backend = "cpu";
  /// Slots of a static shape and the static arena larger than this are
  /// refused (SessionOptions::maxTensorBytes); kept in Program for the
  /// run-time allocations.
  int64_t maxTensorBytes = int64_t{1} << 36;
  /// Where constants live: views of the mapped files, or copies of the
  /// large ones in huge-page memory (SessionOptions::weightMemory).
  WeightMemory weightMemory = WeightMemory::kMmap;
};

Result<std::shared_ptr<const Program>>
loadProgram(const std::string &planPath, const LoadOptions &options,
            const KernelRegistry &kernels);

} // namespace ember

#endif // EMBER_PLAN_LOADER_H
