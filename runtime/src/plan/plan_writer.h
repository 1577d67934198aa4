//===- plan_writer.h - Writing plans and weight files -----------*- C++ -*-===//
//
// Used by the compiler's plan emitter and by test helpers. Part of the
// ember_plan_proto target, which depends on protobuf only, so errors are
// reported as bool + message rather than ember::Status.
//
//   WeightsFileWriter w;
//   if (!w.open(dir + "/model.rank0.weights", &err)) ...
//   uint64_t offset = w.append(table.data(), table.size() * 4);
//   if (!w.finish(program.add_weight_files(), "model.rank0.weights", &err)) ...
//   if (!writePlanFile(plan, dir + "/model.plan", &err)) ...
//
// Files are written whole or not at all (io/atomic_file.h): the data go to
// an unnamed temporary, are fsynced and renamed into place. With a
// FileTransaction, the weights files wait for the plan, and the plan writer
// publishes all of them together at the end (a killed compile never leaves
// new weights beside an old plan, except within the few renames of the
// commit).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_PLAN_WRITER_H
#define EMBER_PLAN_PLAN_WRITER_H

#include "io/atomic_file.h"
#include "plan/ember_plan.pb.h"
#include "plan/xxhash64.h"

#include <cstdint>
#include <string>

namespace ember {

/// Writes a raw weights file: each appended tensor starts at a multiple of
/// kWeightAlignment (zero padding between). The file appears only when
/// finish() succeeds (or, opened with a transaction, when the transaction
/// commits), so a failed or killed write leaves nothing.
class WeightsFileWriter {
public:
  WeightsFileWriter() = default;
  WeightsFileWriter(const WeightsFileWriter &) = delete;
  WeightsFileWriter &operator=(const WeightsFileWriter &) = delete;

  /// With `transaction`, finish() hands the complete file to it instead of
  /// publishing it.
  bool open(const std::string &path, std::string *error,
            FileTransaction *transaction = nullptr);
  /// Appends nbytes at the next aligned offset and returns that offset.
  /// Write errors are reported by finish().
  uint64_t append(const void *data, uint64_t nbytes);
  /// Streaming: beginTensor() pads to the next aligned offset and returns
  /// it; appendBytes() and appendZeros() then add the tensor's bytes in
  /// pieces (zeros as a hole of the file: no disk space). The checksum covers
  /// every byte, holes included.
  uint64_t beginTensor();
  void appendBytes(const void *data, uint64_t nbytes);
  void appendZeros(uint64_t nbytes);
  /// Flushes, publishes (or adds to the transaction) and fills `out` (path =
  /// relativePath, size, xxhash64).
  bool finish(plan::WeightFile *out, const std::string &relativePath,
              std::string *error);

private:
  void writeBytes(const void *data, uint64_t nbytes);

  AtomicFile file_;
  FileTransaction *transaction_ = nullptr;
  uint64_t size_ = 0;
  XxHash64 hash_;
};

/// Writes `plan` atomically: protobuf text format when the path ends in
/// ".txt" or ".pbtxt", binary otherwise. Sets format_version (if 0) and the
/// end marker. With `transaction`, the plan joins it and the transaction is
/// committed (the weights files first, the plan last).
bool writePlanFile(plan::Plan plan, const std::string &path, std::string *error,
                   FileTransaction *transaction = nullptr);

} // namespace ember

#endif // EMBER_PLAN_PLAN_WRITER_H
