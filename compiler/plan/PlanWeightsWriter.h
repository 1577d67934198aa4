//===- PlanWeightsWriter.h - Constants streamed into weights files -*- C++
//-*-===//
//
// Writes the plan's constants (PendingConstant: pieces of bytes that stay in
// their attributes or file mappings) into a rank's weights file, a bounded
// chunk at a time: the compiler never holds a second copy of a table, and the
// pages of a mapped source are dropped once written (releaseMappedPages), so
// its resident memory stays far below the model's size. Zeros (holes of a
// sparse source file, zero blocks, zero splats) become holes of the weights
// file; the checksum covers them all the same.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMPILER_PLAN_PLANWEIGHTSWRITER_H
#define EMBER_COMPILER_PLAN_PLANWEIGHTSWRITER_H

#include "plan/PlanProgramBuilder.h"
#include "plan/plan_writer.h"
#include "progress/progress.h"

#include <cstdint>
#include <vector>

namespace mlir::ember::plan_emitter {

/// Bytes copied (gathered from rows, or checked for zeros) at a time.
constexpr uint64_t kWeightsChunkBytes = uint64_t(16) << 20;

/// Streams constants into one weights file with one bounded buffer.
class ConstantStreamer {
public:
  /// `phase` (may be null) advances by every byte appended.
  ConstantStreamer(::ember::WeightsFileWriter &file,
                   ::ember::progress::Phase *phase)
      : file_(file), phase_(phase) {}

  /// Appends `constant` at the next aligned offset and returns the offset.
  uint64_t append(const PendingConstant &constant);

private:
  /// `size` contiguous bytes at `data`.
  void appendRange(const char *data, uint64_t size);
  /// Bytes that are not (known to be) zero are written, zero blocks become
  /// holes.
  void appendChunk(const char *data, uint64_t size);
  void appendSplat(const PendingConstant &constant);
  void appendWindow(const PendingConstant &constant);

  void advance(uint64_t n) {
    if (phase_)
      phase_->advance(n);
  }

  ::ember::WeightsFileWriter &file_;
  ::ember::progress::Phase *phase_;
  std::vector<char> buffer_;
};

} // namespace mlir::ember::plan_emitter

#endif // EMBER_COMPILER_PLAN_PLANWEIGHTSWRITER_H
